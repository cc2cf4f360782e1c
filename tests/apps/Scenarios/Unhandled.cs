// Scenario `unhandled`: an exception thrown three calls below UnhandledScenario.Run and caught
// nowhere. The runtime reports it on stderr and aborts the process (SIGABRT: exit status 134).
//
// Main -> UnhandledScenario.Run -> Level1 -> Level2 -> Level3 (throws): 1 call each. No
// managed handler runs, so none of these frames returns: each ends either open at the end of
// the trace or unwound by the runtime. Prints "unhandled: throwing from depth 3" first.
using System;
using System.Runtime.CompilerServices;

namespace Scenarios;

public static class UnhandledScenario
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run()
    {
        int r = Level1(1);
        return r;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Level1(int depth)
    {
        int r = Level2(depth + 1);
        return r + 1;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Level2(int depth)
    {
        int r = Level3(depth + 1);
        return r + 1;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Level3(int depth)
    {
        Console.WriteLine($"unhandled: throwing from depth {depth}");
        if (depth > 0)
        {
            throw new InvalidOperationException("unhandled by design (eltrace e2e scenario)");
        }
        return depth;
    }
}
