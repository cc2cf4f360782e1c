// Scenario `inline-resume`, written as users write it (no attributes): an async method
// (Producer) completes TaskCompletionSources that other async calls (Waiter) await. The
// sources are made without RunContinuationsAsynchronously (the default), so each SetResult
// resumes the awaiting Waiter inline, deeper on Producer's own stack: the Waiter runs to its
// next await (or its end), suspends, and returns into Producer's segment, which goes on
// running. Producer moves to the thread pool first (Task.Yield), so the resumes come inside a
// resumed runtime-async segment.
//
// Deterministic: every Waiter suspends at its first await before Producer gets its task back,
// and at its next await before the SetResult that resumed it returns (Producer checks it).
//
// Logical calls: InlineResumeScenario.Run 1; Producer 1 (2 segments, 1 suspension: the
// Task.Yield; the Waiters' tasks are complete when it awaits them); Waiter 4 (3 segments, 2
// suspensions each: 12 segments, 8 suspensions). Waiter(w) returns (w + 0) + (w + 1) =
// 2w + 1; total = 2 * 6 + 4 = 16.
using System;
using System.Threading.Tasks;

namespace AsyncScenarios;

public static class InlineResumeScenario
{
    public const int Waiters = 4;
    public const int Steps = 2;

    private static TaskCompletionSource<int>[,] signals = new TaskCompletionSource<int>[0, 0];
    private static int[] steps = Array.Empty<int>();

    public static int Run()
    {
        signals = new TaskCompletionSource<int>[Waiters, Steps];
        for (int w = 0; w < Waiters; w++)
        {
            for (int s = 0; s < Steps; s++)
            {
                signals[w, s] = new TaskCompletionSource<int>();
            }
        }
        steps = new int[Waiters];
        long total = Producer().GetAwaiter().GetResult();
        Check.Equal("inline-resume total", total, 16L);
        Console.WriteLine($"inline-resume total = {total}");
        return Check.Done("inline-resume");
    }

    public static async Task<long> Producer()
    {
        var waiters = new Task<int>[Waiters];
        for (int w = 0; w < Waiters; w++)
        {
            waiters[w] = Waiter(w);
        }
        await Task.Yield();
        for (int s = 0; s < Steps; s++)
        {
            for (int w = 0; w < Waiters; w++)
            {
                signals[w, s].SetResult(w + s);
                Check.Equal("Waiter steps when SetResult returned", steps[w], s + 1);
            }
        }
        long total = 0;
        foreach (Task<int> t in waiters)
        {
            total += await t;
        }
        return total;
    }

    public static async Task<int> Waiter(int w)
    {
        int sum = 0;
        for (int s = 0; s < Steps; s++)
        {
            sum += await signals[w, s].Task;
            steps[w] = s + 1;
        }
        return sum;
    }
}
