// DoStackSnapshot and ForceGC from a hook: the check profiler calls both in the Enter hook
// of Target, which Main calls 3 times through Outer.
using System.Runtime.CompilerServices;

namespace Probes
{
    public static class SnapshotProbe
    {
        public const int Calls = 3;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Target(int x) => x * 3;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Outer(int x) => Target(x) + 1;

        public static bool Run()
        {
            bool ok = true;
            for (int i = 0; i < Calls; i++)
            {
                ok &= Outer(i) == i * 3 + 1;
            }
            Program.Report("snapshot.calls", Calls);
            return ok;
        }
    }
}
