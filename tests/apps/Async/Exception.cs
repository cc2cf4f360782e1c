// Scenario `exception` of this program, and `classic-exception` of tests/apps/Scenarios, which
// compiles this file without runtime async (classic compiler state machines): E3 awaits
// Task.Yield() (suspends), then throws; E2 awaits E3 and does not catch; E1 awaits E2 inside
// try/catch, catches the exception two async levels up and returns k + 100. Run from sync
// code 3 times.
//
// Runtime async (`exception`), logical calls: ExceptionScenario.Run 1; E1 3 (thunk 3; variant 2
// segments per call, the resume catches and returns k + 100); E2 3 (1 segment per call: it is
// never resumed, the exception passes through its continuation); E3 3 (2 segments each: the
// first call and one resume, which throws).
//
// Classic (`classic-exception`), logical calls: ExceptionScenario.Run 1; E1, E2, E3 3 each
// (stubs). MoveNext: E3 2 segments per call (the second throws; the state machine catches it
// into the task, so MoveNext itself returns normally), E2 2 (its resume rethrows from
// GetResult, caught into its task), E1 2 (its resume catches).
using System;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace AsyncScenarios;

public sealed class AsyncFailure : Exception
{
    public int Code { get; }

    public AsyncFailure(int code) : base($"async failure {code}") => Code = code;
}

public static class ExceptionScenario
{
    public const int Runs = 3;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run(string name)
    {
        for (int k = 0; k < Runs; k++)
        {
            int r = E1(k).GetAwaiter().GetResult();
            Check.Equal("E1", r, k + 100);
            Console.WriteLine($"{name} E1({k}) = {r}");
        }
        return Check.Done(name);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<int> E1(int k)
    {
        try
        {
            int v = await E2(k);
            return v; // never reached
        }
        catch (AsyncFailure e)
        {
            return e.Code + 100;
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<int> E2(int k)
    {
        int v = await E3(k);
        return v + 1;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<int> E3(int k)
    {
        await Task.Yield();
        if (k >= 0)
        {
            throw new AsyncFailure(k);
        }
        return k;
    }
}
