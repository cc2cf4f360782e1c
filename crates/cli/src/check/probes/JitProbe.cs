// The JIT probe (mode `jit`): what the JIT and the runtime do with ELT on. The profiler's `jit`
// experiment selects Caller, Selected, HotProbed and CoreLib's Convert.FromBase64String, and
// counts their Enters, the JIT compilations of every method here and of the two Convert
// methods, and the JITInlining questions asked of it. Small, Leaf and HotPlain are not
// selected.
//  * Inlining: Caller is optimized from its first call (AggressiveOptimization) and calls the
//    one-line Small (not selected: eltrace lets the JIT inline it, so Small is never compiled
//    on its own) and the one-line Selected (selected: eltrace refuses, so it keeps its probes).
//  * Tiering: HotProbed (selected) and HotPlain (not) are called in rounds with pauses longer
//    than the runtime's tiering delay (100 ms), so that tier-0 code, where there is any, is
//    call-counted and recompiled at tier 1 in the background. Both call the inlinable Leaf:
//    only an optimizing compilation asks whether to inline it.
//  * ReadyToRun: Convert.ToBase64String (not selected) and Convert.FromBase64String (selected)
//    are precompiled in CoreLib; each is called R2RCalls times (fewer than the 30 calls that
//    make a method hot), from wrappers compiled without optimization (no inlining into them).
using System;
using System.Runtime.CompilerServices;
using System.Threading;

namespace Probes
{
    public static class JitProbe
    {
        public const int InlineCalls = 1000;
        public const int HotRounds = 10;
        public const int HotCalls = 100;
        public const int PauseMs = 150;
        public const int R2RCalls = 3;

        public static bool Run()
        {
            long inlined = Caller(InlineCalls);
            // Σ (i + 1) + Σ 2i over 0..n-1 = 3·n(n-1)/2 + n
            long want = 3L * InlineCalls * (InlineCalls - 1) / 2 + InlineCalls;
            bool ok = inlined == want;

            long hot = 0, hotWant = 0;
            for (int r = 0; r < HotRounds; r++)
            {
                for (int i = 0; i < HotCalls; i++)
                {
                    hot += HotProbed(i) + HotPlain(i);
                    hotWant += ((i + 7) ^ 3) + ((i + 7) ^ 5);
                }
                Thread.Sleep(PauseMs);
            }
            ok &= hot == hotWant;

            byte[] data = { 1, 2, 3, 250, 251 };
            for (int i = 0; i < R2RCalls; i++)
            {
                byte[] back = FromBase64(ToBase64(data));
                ok &= back.Length == data.Length && back[3] == 250;
            }
            Program.Report("jit.inline_calls", InlineCalls);
            Program.Report("jit.hot_calls", HotRounds * HotCalls);
            Program.Report("jit.r2r_calls", R2RCalls);
            return ok;
        }

        [MethodImpl(MethodImplOptions.AggressiveOptimization | MethodImplOptions.NoInlining)]
        public static long Caller(int n)
        {
            long s = 0;
            for (int i = 0; i < n; i++)
                s += Small(i) + Selected(i);
            return s;
        }

        public static int Small(int x) => x + 1;

        public static int Selected(int x) => x * 2;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int HotProbed(int x) => Leaf(x) ^ 3;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int HotPlain(int x) => Leaf(x) ^ 5;

        public static int Leaf(int x) => x + 7;

        [MethodImpl(MethodImplOptions.NoOptimization | MethodImplOptions.NoInlining)]
        public static string ToBase64(byte[] d) => Convert.ToBase64String(d);

        [MethodImpl(MethodImplOptions.NoOptimization | MethodImplOptions.NoInlining)]
        public static byte[] FromBase64(string s) => Convert.FromBase64String(s);
    }
}
