// Scenario `exit`: Environment.Exit(42) from a frame 4 calls below ExitScenario.Run.
//
// Main -> ExitScenario.Run -> Level1 -> Level2 -> Level3 -> Level4 -> Environment.Exit(42):
// each of these 6 functions has 1 call, and all 6 frames are still open when the process ends.
// The process exits with code 42. Prints "exit: leaving from depth 4" first.
using System;
using System.Runtime.CompilerServices;

namespace Scenarios;

public static class ExitScenario
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
        int r = Level4(depth + 1);
        return r + 1;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Level4(int depth)
    {
        Console.WriteLine($"exit: leaving from depth {depth}");
        Environment.Exit(42);
        return -1;
    }
}
