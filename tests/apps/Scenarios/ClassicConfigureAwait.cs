// Scenario `classic-configureawait`: the shape of the runtime-async `configureawait` scenario
// as classic state machines. RunAsync starts 8 Worker(w) calls and awaits Task.WhenAll of them
// (ConfigureAwait(false)); each Worker awaits Task.Delay(1).ConfigureAwait(false) 3 times, so
// its resumptions land on thread-pool threads, and calls Leaf after each await.
//
// Logical calls: ClassicConfigureAwaitScenario.Run 1; RunAsync 1; Worker 8 (4 MoveNext segments,
// 3 suspensions each: 32 segments); Leaf 24. Worker(w) = 30w + 3; total 864.
using System;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace Scenarios;

public static class ClassicConfigureAwaitScenario
{
    public const int Workers = 8;
    public const int Steps = 3;
    public static int PoolResumes;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run()
    {
        long total = RunAsync().GetAwaiter().GetResult();
        Check.Equal("classic-configureawait total", total, 864L);
        Check.Equal("resumes on pool threads", PoolResumes, Workers * Steps);
        Console.WriteLine($"classic-configureawait total = {total}, pool resumes = {PoolResumes}");
        return Check.Done("classic-configureawait");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<long> RunAsync()
    {
        var tasks = new Task<long>[Workers];
        for (int w = 0; w < Workers; w++)
        {
            tasks[w] = Worker(w);
        }
        long[] results = await Task.WhenAll(tasks).ConfigureAwait(false);
        long total = 0;
        for (int w = 0; w < Workers; w++)
        {
            Check.Equal("Worker", results[w], 30L * w + 3);
            total += results[w];
        }
        return total;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<long> Worker(int w)
    {
        long sum = 0;
        for (int s = 0; s < Steps; s++)
        {
            await Task.Delay(1).ConfigureAwait(false);
            if (Thread.CurrentThread.IsThreadPoolThread)
            {
                Interlocked.Increment(ref PoolResumes);
            }
            sum += Leaf(w, s);
        }
        return sum;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static long Leaf(int w, int s) => w * 10 + s;
}
