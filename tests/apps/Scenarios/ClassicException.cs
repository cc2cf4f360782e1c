// Scenario `classic-exception`: the shape of the runtime-async `exception` scenario as classic
// state machines. E3 awaits Task.Yield(), then throws; E2 awaits E3 without a handler; E1
// awaits E2 in try/catch, catches the exception two async levels up and returns k + 100.
// Run 3 times from sync code.
//
// Logical calls: ClassicExceptionScenario.Run 1; E1, E2, E3 3 each (stubs). MoveNext: E3 2
// segments per call (the second throws; the state machine catches it into the task, so
// MoveNext itself returns normally), E2 2 (its resume rethrows from GetResult, caught into
// its task), E1 2 (its resume catches).
using System;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace Scenarios;

public sealed class ClassicAsyncFailure : Exception
{
    public int Code { get; }

    public ClassicAsyncFailure(int code) : base($"async failure {code}") => Code = code;
}

public static class ClassicExceptionScenario
{
    public const int Runs = 3;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run()
    {
        for (int k = 0; k < Runs; k++)
        {
            int r = E1(k).GetAwaiter().GetResult();
            Check.Equal("E1", r, k + 100);
            Console.WriteLine($"classic-exception E1({k}) = {r}");
        }
        return Check.Done("classic-exception");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<int> E1(int k)
    {
        try
        {
            int v = await E2(k);
            return v; // never reached
        }
        catch (ClassicAsyncFailure e)
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
            throw new ClassicAsyncFailure(k);
        }
        return k;
    }
}
