// A single-threaded queue for the corpus programs that run async work on several threads at
// once, each thread pumping its own queue (AsyncShapes; CorpusLibs' AsyncLinq compiles this file
// too): every continuation posted to it runs on the thread that called Run.
using System;
using System.Collections.Concurrent;
using System.Threading;
using System.Threading.Tasks;

namespace Corpus;

/// A single-threaded queue: the thread that calls Run executes every continuation posted to it.
sealed class OneThread : SynchronizationContext
{
    private readonly BlockingCollection<(SendOrPostCallback Callback, object? State)> items = new();

    public override void Post(SendOrPostCallback d, object? state) => items.Add((d, state));

    public static T Run<T>(Func<Task<T>> work)
    {
        var queue = new OneThread();
        SynchronizationContext? old = Current;
        SetSynchronizationContext(queue);
        try
        {
            Task<T> task = work();
            task.ContinueWith(_ => queue.items.CompleteAdding(), TaskScheduler.Default);
            foreach ((SendOrPostCallback callback, object? state) in queue.items.GetConsumingEnumerable())
            {
                callback(state);
            }
            return task.GetAwaiter().GetResult();
        }
        finally
        {
            SetSynchronizationContext(old);
        }
    }

    /// Runs work(i) on `threads` threads at once, each pumping its own queue.
    public static T[] OnQueues<T>(int threads, Func<int, Task<T>> work)
    {
        var results = new T[threads];
        var all = new Thread[threads];
        for (int t = 0; t < threads; t++)
        {
            int me = t;
            all[t] = new Thread(() => results[me] = Run(() => work(me)));
            all[t].Start();
        }
        foreach (Thread thread in all)
        {
            thread.Join();
        }
        return results;
    }
}
