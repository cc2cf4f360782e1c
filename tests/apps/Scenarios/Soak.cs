// Scenario `soak SECONDS`: a long run for the memory benchmark (docs/performance.md), not a
// test with exact counts. For SECONDS seconds (default 600), waves of 4 short-lived threads
// (thread churn: every ring is retired and freed) each run 20 bursts of Tree(10) (1023 calls,
// 2046 events per burst) with a 10 ms pause after each, while a long-lived thread does the
// same all the time: about 1 M events/s in all.
// Prints the number of Tree calls made.
using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Threading;

namespace Scenarios;

public static class SoakScenario
{
    private static long s_calls;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run(string[] args)
    {
        int seconds = args.Length > 1 && int.TryParse(args[1], out int s) ? s : 600;
        var clock = Stopwatch.StartNew();
        var stop = TimeSpan.FromSeconds(seconds);
        var steady = new Thread(() => { while (clock.Elapsed < stop) Bursts(20); }) { Name = "steady" };
        steady.Start();
        int waves = 0;
        while (clock.Elapsed < stop)
        {
            var wave = new Thread[4];
            for (int i = 0; i < wave.Length; i++)
            {
                wave[i] = new Thread(() => Bursts(20)) { Name = $"wave-{waves}-{i}" };
                wave[i].Start();
            }
            foreach (var t in wave) t.Join();
            waves++;
        }
        steady.Join();
        Console.WriteLine($"soak: {seconds} s, {waves} waves, {Interlocked.Read(ref s_calls)} Tree calls");
        return 0;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Bursts(int n)
    {
        for (int i = 0; i < n; i++)
        {
            long c = Tree(10);
            Interlocked.Add(ref s_calls, c);
            Thread.Sleep(10);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static long Tree(int depth)
    {
        if (depth <= 1) return 1;
        return 1 + Tree(depth - 1) + Tree(depth - 1);
    }
}
