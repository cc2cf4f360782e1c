// Scenario `tier-callee [M] [K] [H]`: only callees loop. The sync Run calls Outer(K) M times
// (through its thunk) and waits for each. Outer (no loop) awaits Spin(K), then Hot(H).
// Spin loops K times over `await Task.Yield()` (every iteration suspends: K + 1 segments).
// Hot awaits Task.Yield(), then runs a synchronous hot loop of H calls of Work (no await in
// the loop: a long segment that on-stack replacement moves to optimized code in the middle),
// then awaits Task.Yield() again. Defaults: M = 40, K = 1000, H = 10000 (Spin and Hot are
// called more than 30 times, so they also tier up by call counts; a larger H makes the
// profiler drop events: the hot loop produces events faster than the writer drains them).
//
// Logical calls (calls / segments / suspensions), defaults in brackets:
//   TierCalleeScenario.Run 1 (plain); Outer [thunk] M [40] (plain frames)
//   Outer M [40] / 3M [120]              / 2M [80]
//   Spin  M [40] / M (K + 1) [40040]     / M K [40000]
//   Hot   M [40] / 3M [120]              / 2M [80]
//   Work  M H [400000] (plain, called from Hot's middle segment)
// No thunk of Spin or Hot runs. Pending at end: 0.
// Results: Spin(K) = K (K - 1) / 2, Work(i) = i & 7, Hot(H) = sum of (i & 7) for i < H,
// Outer = Spin + Hot.
using System;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace AsyncScenarios;

public static class TierCalleeScenario
{
    public const int DefaultM = 40;
    public const int DefaultK = 1000;
    public const int DefaultH = 10000;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run(string[] args)
    {
        int m = args.Length > 1 ? int.Parse(args[1]) : DefaultM;
        int k = args.Length > 2 ? int.Parse(args[2]) : DefaultK;
        int h = args.Length > 3 ? int.Parse(args[3]) : DefaultH;
        long hot = 0;
        for (int i = 0; i < h; i++)
        {
            hot += i & 7;
        }
        long want = (long)k * (k - 1) / 2 + hot;
        long total = 0;
        for (int c = 0; c < m; c++)
        {
            long r = Outer(k, h).GetAwaiter().GetResult();
            Check.Equal("Outer", r, want);
            total += r;
        }
        Console.WriteLine($"tier-callee total = {total}");
        return Check.Done("tier-callee");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<long> Outer(int k, int h)
    {
        long a = await Spin(k);
        long b = await Hot(h);
        return a + b;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<long> Spin(int k)
    {
        long sum = 0;
        for (int i = 0; i < k; i++)
        {
            await Task.Yield();
            sum += i;
        }
        return sum;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<long> Hot(int h)
    {
        await Task.Yield();
        long sum = 0;
        for (int i = 0; i < h; i++)
        {
            sum += Work(i);
        }
        await Task.Yield();
        return sum;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Work(int i) => i & 7;
}
