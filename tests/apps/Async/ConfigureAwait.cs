// Scenario `configureawait` of this program, and `classic-configureawait` of
// tests/apps/Scenarios, which compiles this file without runtime async (classic compiler state
// machines): RunAsync starts 8 concurrent Worker(w) calls and awaits Task.WhenAll of them
// (ConfigureAwait(false)). Each Worker awaits a gate of its own with ConfigureAwait(false) 3
// times and calls the plain Leaf after each await. Run, once RunAsync returned its task, opens
// the gates from a thread-pool thread (OpenGates, in Task.Run), one at a time, step by step.
// Worker(w) returns sum over s=0..2 of (w*10 + s) = 30w + 3; total = 30*28 + 24 = 864.
//
// Every await suspends, whatever the machine's load. An earlier version awaited
// Task.Delay(1).ConfigureAwait(false): when a thread was descheduled for more than 1 ms between
// creating the delay and awaiting it (a loaded machine: once in 26 runs of the e2e scenario,
// async, thread and timing groups beside CPU burners), the delay was over, the await went on
// without suspending, and the program saw 23 resumes on pool threads instead of 24 (eltrace
// recorded 23 suspensions; it was right). Now a gate opens only after its Worker suspended on
// it: the first gates after RunAsync returned its task (every Worker had suspended by then), a
// later one after the previous gate's SetResult returned. The gates run their continuations
// inline (no RunContinuationsAsynchronously), so SetResult returns once the Worker has resumed,
// called Leaf and suspended at its next gate (or returned); OpenGates checks that it has. The
// resumes so run on OpenGates's pool thread, deeper than its frame; the last one completes
// WhenAll and resumes RunAsync there too.
//
// Runtime async (`configureawait`), logical calls: ConfigureAwaitScenario.Run 1; OpenGates 1;
// RunAsync 1 (thunk 1; variant 2 segments); Worker 8 (called from the variant RunAsync but not
// awaited at once, so through its thunk: thunk 8 calls; variant 4 segments, 3 suspensions
// each, 32 segments, 24 suspensions); Leaf 24.
//
// Classic (`classic-configureawait`), logical calls: ConfigureAwaitScenario.Run 1; OpenGates 1;
// RunAsync 1; Worker 8 (4 MoveNext segments, 3 suspensions each: 32 segments); Leaf 24.
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

    /// gates[w, s]: what Worker w awaits at step s.
    private static TaskCompletionSource[,] gates = new TaskCompletionSource[0, 0];

    /// How many steps each Worker has finished (written by the Worker after its Leaf).
    private static int[] done = Array.Empty<int>();

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run(string name)
    {
        gates = new TaskCompletionSource[Workers, Steps];
        for (int w = 0; w < Workers; w++)
        {
            for (int s = 0; s < Steps; s++)
            {
                gates[w, s] = new TaskCompletionSource();
            }
        }
        done = new int[Workers];
        // Every Worker waits at its first gate, and RunAsync at Task.WhenAll, once RunAsync
        // returned its task.
        Task<long> pending = RunAsync();
        Task.Run(OpenGates).Wait();
        long total = pending.GetAwaiter().GetResult();
        Check.Equal($"{name} total", total, 864L);
        Check.Equal("resumes on pool threads", PoolResumes, Workers * Steps);
        Console.WriteLine($"{name} total = {total}, pool resumes = {PoolResumes}");
        return Check.Done(name);
    }

    /// On a pool thread: opens the gates one at a time, step by step.
    [MethodImpl(MethodImplOptions.NoInlining)]
    static void OpenGates()
    {
        for (int s = 0; s < Steps; s++)
        {
            for (int w = 0; w < Workers; w++)
            {
                gates[w, s].SetResult();
                // The continuation ran inline: the Worker finished this step and waits at its
                // next gate (or returned).
                Check.Equal("steps done when the gate's SetResult returned", Volatile.Read(ref done[w]), s + 1);
            }
        }
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
            await gates[w, s].Task.ConfigureAwait(false);
            if (Thread.CurrentThread.IsThreadPoolThread)
            {
                Interlocked.Increment(ref PoolResumes);
            }
            sum += Leaf(w, s);
            Volatile.Write(ref done[w], s + 1);
        }
        return sum;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static long Leaf(int w, int s) => w * 10 + s;
}
