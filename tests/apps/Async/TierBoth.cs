// Scenario `tier-both [N]` (issue #13, point 3) of this program, and `classic-tier [N]` of
// tests/apps/Scenarios, which compiles this file without runtime async (classic compiler state
// machines): an async caller that loops over an async callee that loops too, run long enough
// for tiered compilation to replace their code while calls are suspended. Loop(N) awaits Step
// N times (the issue calls it Run); Step awaits Middle 7 times in a loop; Middle awaits Leaf
// once; Leaf awaits Task.Yield() 3 times (no loop). Every await suspends (Leaf's first Yield
// suspends Middle, Step and Loop with it). N defaults to 2000 (the issue: N <= 500 exact,
// N = 2000 wrong in every run). Under the profiler CoreLib runs JIT-compiled tier-0 code, and
// the thread pool's dispatch loop is moved to OSR code in the middle of the run: resumes then
// come 0x40 deeper than before, below segments that suspended at the old depth.
// Results: Leaf(j) = j, Middle(j) = j + 1, Step = 1 + ... + 7 = 28, Loop(N) = 28N.
//
// Runtime async (`tier-both`), logical calls (calls / segments / suspensions), N = 2000 in
// brackets:
//   TierBothScenario.Run 1 (plain); Loop [thunk] 1 (plain frame)
//   Loop   1         / N + 1 [2001]  / N [2000]
//   Step   N [2000]  / 8N [16000]    / 7N [14000]   (first segment + one resume per Middle)
//   Middle 7N [14000] / 14N [28000]  / 7N [14000]   (suspends with Leaf, resumed once)
//   Leaf   7N [14000] / 28N [56000]  / 21N [42000]  (4 segments, 3 suspensions per call)
// No thunk of Step, Middle or Leaf runs (variant calls variant). Pending at end: 0.
//
// Classic (`classic-tier`), logical calls (calls / segments / suspensions), N = 2000 in
// brackets. Each async method is a stub (one Enter/Leave per call) plus its state machine's
// MoveNext (one Enter/Leave per segment); `report` shows the logical calls on the MoveNext row
// (async.method):
//   TierBothScenario.Run 1 (plain)
//   Loop   1 stub;          MoveNext N + 1 [2001] segments,  N [2000] suspensions
//   Step   N [2000] stubs;  MoveNext 8N [16000] segments,    7N [14000] suspensions
//   Middle 7N [14000] stubs; MoveNext 14N [28000] segments,   7N [14000] suspensions
//   Leaf   7N [14000] stubs; MoveNext 28N [56000] segments,  21N [42000] suspensions
// The calls are exact; segments and suspensions are at most these: a classic callee's
// continuation is queued before its caller's await checks it, so now and then a callee
// completes on another pool thread first and its caller goes on without suspending (measured,
// N = 2000: .NET 10, 1 Middle and 3 Step segments fewer; .NET 11, 604 Middle, 614 Step and 66
// Loop segments fewer; the traces have exactly that many MoveNext frames fewer). Runtime-async
// methods cannot race like this: the continuation is queued only after the whole chain of
// callers has suspended.
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
        Console.WriteLine($"{args[0]} Loop({n}) = {r}");
        return Check.Done(args[0]);
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
