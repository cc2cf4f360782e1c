// Scenario `configureawait` of this program, and `classic-configureawait` of
// tests/apps/Scenarios, which compiles this file without runtime async (classic compiler state
// machines): RunAsync starts 8 concurrent Worker(w) calls and awaits Task.WhenAll of them
// (ConfigureAwait(false)). Each Worker awaits Task.Delay(1).ConfigureAwait(false) 3 times, so
// its resumptions land on thread-pool threads, and calls the plain Leaf after each await.
// Worker(w) returns sum over s=0..2 of (w*10 + s) = 30w + 3; total = 30*28 + 24 = 864.
//
// Runtime async (`configureawait`), logical calls: ConfigureAwaitScenario.Run 1; RunAsync 1
// (thunk 1; variant 2 segments); Worker 8 (called from the variant RunAsync but not awaited at
// once, so through its thunk: thunk 8 calls; variant 4 segments, 3 suspensions each, 32
// segments, 24 suspensions); Leaf 24.
//
// Classic (`classic-configureawait`), logical calls: ConfigureAwaitScenario.Run 1; RunAsync 1;
// Worker 8 (4 MoveNext segments, 3 suspensions each: 32 segments); Leaf 24.
using System;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace AsyncScenarios;

public static class ConfigureAwaitScenario
{
    public const int Workers = 8;
    public const int Steps = 3;
    public static int PoolResumes;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run(string name)
    {
        long total = RunAsync().GetAwaiter().GetResult();
        Check.Equal($"{name} total", total, 864L);
        Check.Equal("resumes on pool threads", PoolResumes, Workers * Steps);
        Console.WriteLine($"{name} total = {total}, pool resumes = {PoolResumes}");
        return Check.Done(name);
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
