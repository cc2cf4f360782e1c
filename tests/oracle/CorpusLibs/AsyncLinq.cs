// `async-linq`: System.Linq.AsyncEnumerable (NuGet) as its users use it. Our own source is an
// async iterator (Readings) that awaits Task.Yield before each element; the package's LINQ
// operators consume it (Where, Select with a plain and with an async selector, Take, SelectMany
// into our iterator, GroupBy, OrderBy, Zip, Chunk, and the terminal ToListAsync, CountAsync,
// FirstAsync, AnyAsync with a plain and an async predicate, SumAsync, AggregateAsync with an
// async step), `await foreach` with `break`, and a consumer that cancels its CancellationToken
// mid-way. The same Work runs on four threads at once, each pumping its own single-threaded
// SynchronizationContext (OneThread); then four times at once on the thread pool, over a source
// that never suspends. The package's operators are async iterators and async methods of its
// own (classic state machines, no attributes added): all of them, instrumented too, are counted.
//
// Deterministic counts whatever the timing: an async iterator's MoveNext runs once per call and
// once per resume, and its IValueTaskSource members (OnCompleted) once per await that found it
// incomplete, in the package as in our code. So every await that can suspend runs on a OneThread
// queue, where Task.Yield's resume is posted behind the code that awaited it and the same awaits
// suspend in every run; on the pool nothing suspends (an await of Task.Yield there races with
// the thread that resumes it, and the package's iterators count the difference).
using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using Corpus;

namespace CorpusLibs;

public static class AsyncLinq
{
    const int Threads = 4;

    const string Expected =
        "10,20,40,50,70,80 8 4 True False 244 0:3,1:3,2:3,3:3 20 103 2-10-18-26 120 30";

    public static int Run()
    {
        string[] queued = OneThread.OnQueues(Threads, _ => Work(pause: true));
        string[] pooled = Pool(() => Work(pause: false));
        string[] all = queued.Concat(pooled).ToArray();
        string result = all.All(r => r == all[0]) ? $"{all.Length}x {all[0]}" : string.Join(" | ", all);
        return Program.Expect("async-linq", result, $"{2 * Threads}x {Expected}");
    }

    /// The pipelines, one after the other; every value of the result is fixed.
    static async Task<string> Work(bool pause)
    {
        // Where, an async selector, Take (stops its source mid-way), ToListAsync.
        List<int> scaled = await Readings(16, pause)
            .Where(x => x % 3 != 0)
            .Select(async (int x, CancellationToken ct) =>
            {
                if (pause)
                {
                    await Task.Yield();
                }
                return x * 10;
            })
            .Take(6)
            .ToListAsync();

        int evens = await Readings(16, pause).CountAsync(x => x % 2 == 0);
        int first = await Readings(16, pause).Where(x => x % 5 == 4).FirstAsync();
        bool large = await Readings(16, pause).AnyAsync((x, ct) => IsLarge(x, pause, ct));
        bool negative = await Readings(4, pause).AnyAsync(x => x < 0);

        // Each reading expands into another enumeration of our own iterator.
        int flat = await Readings(4, pause).SelectMany(x => Readings(x + 10, pause)).SumAsync();

        List<string> groups = await Readings(12, pause)
            .GroupBy(x => x % 4)
            .Select(g => $"{g.Key}:{g.Count()}")
            .OrderBy(s => s, StringComparer.Ordinal)
            .ToListAsync();

        int partial = 0;
        await foreach (int x in Readings(16, pause).Select(x => x * 2))
        {
            if (x > 8)
            {
                break;
            }
            partial += x;
        }

        int seen = 0;
        using (var cts = new CancellationTokenSource())
        {
            try
            {
                await foreach (int x in Readings(16, pause).Where(x => x % 2 == 1).WithCancellation(cts.Token))
                {
                    seen++;
                    if (x == 5)
                    {
                        cts.Cancel();
                    }
                }
            }
            catch (OperationCanceledException)
            {
                seen += 100;
            }
        }

        List<string> chunks = await Readings(8, pause)
            .Zip(Readings(8, pause), (a, b) => a + b)
            .Chunk(2)
            .Select(c => c.Sum().ToString())
            .ToListAsync();

        int total = await Readings(16, pause).SumAsync();
        int folded = await Readings(5, pause).AggregateAsync(0, (acc, x, ct) => Step(acc, x, pause, ct));

        return $"{string.Join(",", scaled)} {evens} {first} {large} {negative} {flat} {string.Join(",", groups)} " +
            $"{partial} {seen} {string.Join("-", chunks)} {total} {folded}";
    }

    /// The source: `count` readings 0, 1, ...; with `pause`, each after a Task.Yield.
    static async IAsyncEnumerable<int> Readings(int count, bool pause,
        [EnumeratorCancellation] CancellationToken token = default)
    {
        for (int i = 0; i < count; i++)
        {
            if (pause)
            {
                await Task.Yield();
            }
            token.ThrowIfCancellationRequested();
            yield return i;
        }
    }

    static async ValueTask<bool> IsLarge(int x, bool pause, CancellationToken token)
    {
        if (pause)
        {
            await Task.Yield();
        }
        return x > 3;
    }

    static async ValueTask<int> Step(int acc, int x, bool pause, CancellationToken token)
    {
        if (pause)
        {
            await Task.Yield();
        }
        return acc + x * x;
    }

    /// Runs work() `Threads` times at once on the thread pool.
    static string[] Pool(Func<Task<string>> work)
    {
        var tasks = new Task<string>[Threads];
        for (int t = 0; t < Threads; t++)
        {
            tasks[t] = Task.Run(work);
        }
        return Task.WhenAll(tasks).GetAwaiter().GetResult();
    }
}
