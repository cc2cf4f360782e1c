// BenchmarkDotNet harness of scripts/bench.sh: the same empty, non-inlined method as the
// Stopwatch harness, run in-process (so the profiler configuration of this process is the one
// measured), 1000 calls per operation, 200 operations per iteration. Before each iteration it
// sleeps 100 ms so that the profiler's writer has drained the thread's buffer (each iteration
// measures the hooks, not a full buffer). Prints `ns_per_call X` (BenchmarkDotNet's mean).
using System;
using System.Linq;
using System.Runtime.CompilerServices;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Jobs;
using BenchmarkDotNet.Running;
using BenchmarkDotNet.Toolchains.InProcess.NoEmit;

namespace BenchBdn;

public static class Target
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Empty() { }
}

public class EmptyCall
{
    [IterationSetup]
    public void Pause() => System.Threading.Thread.Sleep(100);

    [Benchmark(OperationsPerInvoke = 1000)]
    public void Calls()
    {
        for (int i = 0; i < 1000; i++)
        {
            Target.Empty();
        }
    }
}

public static class Program
{
    public static int Main(string[] args)
    {
        bool quick = args.Contains("--quick");
        var job = Job.Default
            .WithToolchain(InProcessNoEmitToolchain.Instance)
            .WithInvocationCount(200)
            .WithUnrollFactor(1)
            .WithWarmupCount(quick ? 1 : 3)
            .WithIterationCount(quick ? 2 : 15);
        var config = ManualConfig.CreateEmpty()
            .AddJob(job)
            .AddLogger(BenchmarkDotNet.Loggers.NullLogger.Instance)
            .AddColumnProvider(BenchmarkDotNet.Columns.DefaultColumnProviders.Instance)
            .WithOptions(ConfigOptions.DisableLogFile);
        var summary = BenchmarkRunner.Run<EmptyCall>(config);
        var stats = summary.Reports.FirstOrDefault()?.ResultStatistics;
        if (stats == null)
        {
            Console.Error.WriteLine("BenchmarkDotNet produced no result");
            return 1;
        }
        Console.WriteLine($"ns_per_call {stats.Mean:F3}");
        return 0;
    }
}
