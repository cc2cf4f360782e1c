// Scenario `tier-both [N]` (issue #13, point 3): a runtime-async caller that loops over a
// runtime-async callee that loops too, run long enough for tiered compilation to replace
// their code while calls are suspended. Loop(N) awaits Step N times (the issue calls it Run);
// Step awaits Middle 7 times in a loop; Middle awaits Leaf once; Leaf awaits Task.Yield() 3
// times (no loop). Every await suspends (Leaf's first Yield suspends Middle, Step and Loop
// with it). N defaults to 2000 (the issue: N <= 500 exact, N = 2000 wrong in every run).
// Under the profiler CoreLib runs JIT-compiled tier-0 code, and the thread pool's dispatch
// loop is moved to OSR code in the middle of the run: resumes then come 0x40 deeper than
// before, below segments that suspended at the old depth.
//
// Logical calls (calls / segments / suspensions), N = 2000 in brackets:
//   TierBothScenario.Run 1 (plain); Loop [thunk] 1 (plain frame)
//   Loop   1         / N + 1 [2001]  / N [2000]
//   Step   N [2000]  / 8N [16000]    / 7N [14000]   (first segment + one resume per Middle)
//   Middle 7N [14000] / 14N [28000]  / 7N [14000]   (suspends with Leaf, resumed once)
//   Leaf   7N [14000] / 28N [56000]  / 21N [42000]  (4 segments, 3 suspensions per call)
// No thunk of Step, Middle or Leaf runs (variant calls variant). Pending at end: 0.
// Results: Leaf(j) = j, Middle(j) = j + 1, Step = 1 + ... + 7 = 28, Loop(N) = 28N.
using System;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace AsyncScenarios;

public static class TierBothScenario
{
    public const int DefaultN = 2000;
    public const int MiddleCalls = 7;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run(string[] args)
    {
        int n = args.Length > 1 ? int.Parse(args[1]) : DefaultN;
        long r = Loop(n).GetAwaiter().GetResult();
        Check.Equal("Loop", r, 28L * n);
        Console.WriteLine($"tier-both Loop({n}) = {r}");
        return Check.Done("tier-both");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<long> Loop(int n)
    {
        long sum = 0;
        for (int i = 0; i < n; i++)
        {
            sum += await Step();
        }
        return sum;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<int> Step()
    {
        int sum = 0;
        for (int j = 0; j < MiddleCalls; j++)
        {
            sum += await Middle(j);
        }
        return sum;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<int> Middle(int j)
    {
        int v = await Leaf(j);
        return v + 1;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<int> Leaf(int j)
    {
        await Task.Yield();
        await Task.Yield();
        await Task.Yield();
        return j;
    }
}
