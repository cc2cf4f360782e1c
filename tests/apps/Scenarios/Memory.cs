// Scenarios for the profiled process's memory (issue 16, scripts/memory.sh and
// crates/cli/tests/e2e/memory.rs). Each prints its peak resident memory (VmHWM) at the end.
//
// `many-threads [N] [STEPS]` (default 2000, 1000): N threads (named many-0 …) are all alive
// at once: each calls Live once, and Live calls Step STEPS times, waits until every thread
// has done so, then calls Step STEPS times more. In all: Live N calls, Step 2 * N * STEPS.
//
// `busy [SECONDS] [THREADS]` (default 60, 2): THREADS threads call Step in a loop until
// SECONDS have passed; each prints its number of Step calls (its Spin calls once).
using System;
using System.Diagnostics;
using System.IO;
using System.Runtime.CompilerServices;
using System.Threading;

namespace Scenarios;

public static class MemoryScenario
{
    static int Arg(string[] args, int i, int fallback) =>
        args.Length > i && int.TryParse(args[i], out var v) ? v : fallback;

    /// The process's peak resident memory in KiB (VmHWM), 0 if unknown.
    static long PeakKib()
    {
        foreach (var line in File.ReadLines("/proc/self/status"))
        {
            if (line.StartsWith("VmHWM:"))
            {
                return long.Parse(line.Substring(6).Trim().Split(' ')[0]);
            }
        }
        return 0;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Step(int i, int k) => (31 * i + k) % 7;

    sealed class Gate
    {
        public int Steps;
        public CountdownEvent Ready = null!;
        public ManualResetEventSlim Go = new(false);
        public long Sum;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Live(Gate g, int index)
    {
        long sum = 0;
        for (int k = 0; k < g.Steps; k++)
        {
            sum += Step(index, k);
        }
        g.Ready.Signal();
        g.Go.Wait();
        for (int k = 0; k < g.Steps; k++)
        {
            sum += Step(index, k);
        }
        Interlocked.Add(ref g.Sum, sum);
    }

    public static int ManyThreads(string[] args)
    {
        int n = Arg(args, 1, 2000);
        var g = new Gate { Steps = Arg(args, 2, 1000), Ready = new CountdownEvent(n) };
        var threads = new Thread[n];
        for (int i = 0; i < n; i++)
        {
            int index = i;
            threads[i] = new Thread(() => Live(g, index), 256 * 1024) { Name = "many-" + i };
            threads[i].Start();
        }
        g.Ready.Wait();
        // Every thread is alive here, with its ring.
        g.Go.Set();
        foreach (var t in threads)
        {
            t.Join();
        }
        Console.WriteLine($"many-threads: {n} threads, {g.Steps} steps, sum {g.Sum}");
        Console.WriteLine($"peak_rss_kib={PeakKib()}");
        return 0;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static long Spin(Stopwatch clock, long ms, int index)
    {
        long calls = 0;
        int k = 0;
        while (clock.ElapsedMilliseconds < ms)
        {
            for (int j = 0; j < 1000; j++)
            {
                k += Step(index, j);
            }
            calls += 1000;
        }
        return calls + (k & 0);
    }

    public static int Busy(string[] args)
    {
        long ms = Arg(args, 1, 60) * 1000L;
        int n = Arg(args, 2, 2);
        var clock = Stopwatch.StartNew();
        var calls = new long[n];
        var threads = new Thread[n];
        for (int i = 0; i < n; i++)
        {
            int index = i;
            threads[i] = new Thread(() => calls[index] = Spin(clock, ms, index)) { Name = "busy-" + i };
            threads[i].Start();
        }
        foreach (var t in threads)
        {
            t.Join();
        }
        for (int i = 0; i < n; i++)
        {
            Console.WriteLine($"busy-{i}: {calls[i]} Step calls");
        }
        Console.WriteLine($"peak_rss_kib={PeakKib()}");
        return 0;
    }
}
