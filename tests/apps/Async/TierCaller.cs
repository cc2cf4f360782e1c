// Scenario `tier-caller [N]`: only the caller loops. Loop(N) awaits Step(i) N times; Step
// (no loop) awaits Leaf once; Leaf (no loop) awaits Task.Yield() 3 times. Every await
// suspends. N defaults to 10000 (with N = 2000 no pool thread ran enough work items in one
// dispatch loop for it to be moved to OSR code: 2 runs of 2 were exact). Loop's code is the
// only one with a loop (tier 0 with patchpoints, then OSR or tier 1); Step and Leaf tier up
// by call counts alone.
//
// Logical calls (calls / segments / suspensions), N = 10000 in brackets:
//   TierCallerScenario.Run 1 (plain); Loop [thunk] 1 (plain frame)
//   Loop 1         / N + 1 [10001] / N [10000]
//   Step N [10000] / 2N [20000]    / N [10000]
//   Leaf N [10000] / 4N [40000]    / 3N [30000]
// No thunk of Step or Leaf runs. Pending at end: 0.
// Results: Leaf(i) = i, Step(i) = i + 1, Loop(N) = N (N + 1) / 2.
using System;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace AsyncScenarios;

public static class TierCallerScenario
{
    public const int DefaultN = 10000;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run(string[] args)
    {
        int n = args.Length > 1 ? int.Parse(args[1]) : DefaultN;
        long r = Loop(n).GetAwaiter().GetResult();
        Check.Equal("Loop", r, (long)n * (n + 1) / 2);
        Console.WriteLine($"tier-caller Loop({n}) = {r}");
        return Check.Done("tier-caller");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<long> Loop(int n)
    {
        long sum = 0;
        for (int i = 0; i < n; i++)
        {
            sum += await Step(i);
        }
        return sum;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<int> Step(int i)
    {
        int v = await Leaf(i);
        return v + 1;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<int> Leaf(int i)
    {
        await Task.Yield();
        await Task.Yield();
        await Task.Yield();
        return i;
    }
}
