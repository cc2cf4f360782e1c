// Scenarios `queues` and `queues-pool`: four threads run the same runtime-async methods at once, each
// with many concurrent calls of one method. Without `pool` each thread pumps its own
// single-threaded queue (a SynchronizationContext: every resume of its work comes back to it,
// none crosses threads); in `queues-pool` the same work runs on the shared thread pool (resumes
// go to any pool thread). Written as users write it: no attributes on the async methods.
//
// Logical calls: Batch 4 (one per thread); Worker 4 * 8 = 32, each Steps + 1 = 6 segments
// when every Step suspends; Step 32 * 5 = 160, 2 segments each (Task.Yield always
// suspends). Result per thread: 8 * (0 + 1 + 2 + 3 + 4) = 80.
using System;
using System.Collections.Concurrent;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace AsyncScenarios;

public static class QueuesScenario
{
    public const int Threads = 4;
    public const int Concurrent = 8;
    public const int Steps = 5;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run(bool pool)
    {
        var results = new long[Threads];
        var threads = new Thread[Threads];
        for (int t = 0; t < Threads; t++)
        {
            int me = t;
            threads[t] = new Thread(() =>
            {
                results[me] = pool ? Batch(me).GetAwaiter().GetResult() : Queue.Run(() => Batch(me));
            });
            threads[t].Start();
        }
        foreach (Thread th in threads)
        {
            th.Join();
        }
        for (int t = 0; t < Threads; t++)
        {
            Check.Equal("queues batch", results[t], Concurrent * 10L);
        }
        return Check.Done(pool ? "queues-pool" : "queues");
    }

    public static async Task<long> Batch(int t)
    {
        var tasks = new Task<long>[Concurrent];
        for (int i = 0; i < Concurrent; i++)
        {
            tasks[i] = Worker(i);
        }
        long sum = 0;
        foreach (Task<long> task in tasks)
        {
            sum += await task;
        }
        return sum;
    }

    public static async Task<long> Worker(int i)
    {
        long sum = 0;
        for (int k = 0; k < Steps; k++)
        {
            sum += await Step(k);
        }
        return sum;
    }

    public static async Task<long> Step(int k)
    {
        await Task.Yield();
        return k;
    }
}

/// A single-threaded queue: the thread that calls Run executes every continuation posted to it.
sealed class Queue : SynchronizationContext
{
    private readonly BlockingCollection<(SendOrPostCallback, object?)> items = new();

    public override void Post(SendOrPostCallback d, object? state) => items.Add((d, state));

    public static long Run(Func<Task<long>> work)
    {
        var q = new Queue();
        SynchronizationContext? old = Current;
        SetSynchronizationContext(q);
        try
        {
            Task<long> task = work();
            task.ContinueWith(_ => q.items.CompleteAdding(), TaskScheduler.Default);
            foreach ((SendOrPostCallback d, object? state) in q.items.GetConsumingEnumerable())
            {
                d(state);
            }
            return task.GetAwaiter().GetResult();
        }
        finally
        {
            SetSynchronizationContext(old);
        }
    }
}
