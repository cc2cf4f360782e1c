// Times N calls of Target.Empty (a non-inlined empty method) R times and prints the best
// ns per call: `EltraceBench <calls> <rounds> [pause_ms] [threads]` (with threads > 1, that
// many threads make N calls each at once, and the ns per call is their mean). Between rounds it sleeps pause_ms
// (default 200), so that the profiler's writer thread has drained the thread's buffer and each
// round measures the hooks, not a full buffer. scripts/bench.sh runs it with and without the
// profiler. The loop is optimized from the start (AggressiveOptimization), so the JIT's code
// for the loop is the same in every configuration; only Empty's probes differ.
using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Bench;

public static class Target
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Empty() { }
}

public static class Program
{
    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.AggressiveOptimization)]
    static long Loop(long n)
    {
        long t0 = Stopwatch.GetTimestamp();
        for (long i = 0; i < n; i++)
        {
            Target.Empty();
        }
        return Stopwatch.GetTimestamp() - t0;
    }

    public static int Main(string[] args)
    {
        long n = args.Length > 0 ? long.Parse(args[0]) : 1_000_000;
        int rounds = args.Length > 1 ? int.Parse(args[1]) : 5;
        int pause = args.Length > 2 ? int.Parse(args[2]) : 200;
        int threads = args.Length > 3 ? int.Parse(args[3]) : 1;
        Loop(1000); // warm-up: JIT, first events, the thread's buffer
        double best = double.MaxValue;
        for (int r = 0; r < rounds; r++)
        {
            System.Threading.Thread.Sleep(pause);
            double ns = threads <= 1 ? Loop(n) * 1e9 / Stopwatch.Frequency / n : Parallel(n, threads);
            best = Math.Min(best, ns);
        }
        Console.WriteLine($"ns_per_call {best:F3}");
        return 0;
    }

    /// `threads` threads call Empty `n` times each at once; the mean of their ns per call.
    static double Parallel(long n, int threads)
    {
        var ticks = new long[threads];
        var ts = new System.Threading.Thread[threads];
        using var start = new System.Threading.Barrier(threads);
        for (int t = 0; t < threads; t++)
        {
            int i = t;
            ts[t] = new System.Threading.Thread(() =>
            {
                Loop(1000);
                start.SignalAndWait();
                ticks[i] = Loop(n);
            });
            ts[t].Start();
        }
        foreach (var t in ts) t.Join();
        double sum = 0;
        foreach (var t in ticks) sum += t * 1e9 / Stopwatch.Frequency / n;
        return sum / threads;
    }
}
