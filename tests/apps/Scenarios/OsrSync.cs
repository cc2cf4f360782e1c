// Scenario `osr-sync [N]`: synchronous methods with hot loops, so that on-stack replacement
// moves a running frame from tier-0 code to optimized (OSR) code in the middle of a call.
// Hot(n) calls Callee(i) for i < n in a loop; Run calls Hot(N) 3 times (the first call is
// OSR'd in its loop, later ones may start in tier-0 code again, be OSR'd, or run tier-1
// code). Then Nest calls Hot(2) 10000 times in a loop of its own, so that Nest's frame is
// OSR'd while it is the caller of short Hot calls (which tier up by call counts). N defaults
// to 10000 (OSR needs a few thousand iterations; N = 100000 makes the profiler drop events:
// the loop produces them faster than the writer drains them).
//
// Calls (each Enter is a call; all balanced, no tail calls: Callee uses its result):
//   OsrSyncScenario.Run 1; Nest 1; Hot 3 + 10000 = 10003; Callee 3N + 10000 * 2
//   [50000 for N = 10000].
// Results: Callee(i) = i & 15, Hot(n) = sum of (i & 15) for i < n, Nest = 10000 Hot(2).
using System;
using System.Runtime.CompilerServices;

namespace Scenarios;

public static class OsrSyncScenario
{
    public const int DefaultN = 10000;
    public const int Calls = 3;
    public const int NestCalls = 10000;
    public const int NestN = 2;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run(string[] args)
    {
        int n = args.Length > 1 ? int.Parse(args[1]) : DefaultN;
        long want = 0;
        for (int i = 0; i < n; i++)
        {
            want += i & 15;
        }
        for (int c = 0; c < Calls; c++)
        {
            Check.Equal("Hot", Hot(n), want);
        }
        long shortSum = 0;
        for (int i = 0; i < NestN; i++)
        {
            shortSum += i & 15;
        }
        Check.Equal("Nest", Nest(NestN), NestCalls * shortSum);
        Console.WriteLine($"osr-sync Hot({n}) = {want}");
        return Check.Done("osr-sync");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static long Hot(int n)
    {
        long sum = 0;
        for (int i = 0; i < n; i++)
        {
            sum += Callee(i);
        }
        return sum;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static long Nest(int n)
    {
        long sum = 0;
        for (int c = 0; c < NestCalls; c++)
        {
            sum += Hot(n);
        }
        return sum;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Callee(int i) => i & 15;
}
