// Scenario `nested` of this program, and `classic-nested` of tests/apps/Scenarios, which
// compiles this file without runtime async (classic compiler state machines): a chain of async
// methods, L1 awaits L2 awaits L3; L3 awaits Task.Yield() twice and Task.Delay(1) once (3
// suspensions), then awaits L4, which completes synchronously (no await reached, never
// suspends). Run from sync code 3 times.
// L1(k) = L2(k) + 1, L2(k) = L3(k) * 2, L3(k) = k + 10 + L4(k), L4(k) = k; L1(k) = 4k + 21.
//
// Runtime async (`nested`), logical calls: NestedScenario.Run 1; L1 3 (thunk 3); L2 3; L3 3 (4
// segments, 3 suspensions each: 12 segments, 9 suspensions); L4 3 (1 segment each, no
// suspension); L1 and L2 are suspended while L3 is and resumed once, when L3 completes: 2
// segments per call (6 each). L1 is called from sync code (thunk 3 calls); L2, L3, L4 only as
// async variants.
//
// Classic (`classic-nested`), logical calls: NestedScenario.Run 1; L1, L2, L3, L4 3 each (stubs,
// one Enter/Leave per call). MoveNext segments: L3 4 per call (12), L4 1 per call (3, completes
// synchronously), L2 and L1 2 per call (6 each: the first run, and one resume when the awaited
// task completes; they do not wake up at L3's inner suspensions).
using System;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace AsyncScenarios;

public static class NestedScenario
{
    public const int Runs = 3;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run(string name)
    {
        for (int k = 0; k < Runs; k++)
        {
            int r = L1(k).GetAwaiter().GetResult();
            Check.Equal("L1", r, 4 * k + 21);
            Console.WriteLine($"{name} L1({k}) = {r}");
        }
        return Check.Done(name);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<int> L1(int k)
    {
        int v = await L2(k);
        return v + 1;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<int> L2(int k)
    {
        int v = await L3(k);
        return v * 2;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<int> L3(int k)
    {
        await Task.Yield();
        await Task.Delay(1);
        await Task.Yield();
        int s = await L4(k);
        return k + 10 + s;
    }

    // Completes synchronously: the condition is never true, so no await is reached.
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<int> L4(int k)
    {
        if (k < 0)
        {
            await Task.Yield();
        }
        return k;
    }
}
