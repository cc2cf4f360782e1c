// Program `async`: classic (compiler state machine) async/await. A chain of awaits through
// Task.Yield and Task.Delay, fan-out with Task.WhenAll, ConfigureAwait(false), methods that
// complete synchronously (no await reached), ValueTask, async lambdas, async recursion, an
// exception thrown after an await and caught by an awaiting caller, a SemaphoreSlim throttle,
// and a TaskCompletionSource completed from a dedicated thread, generic async code (a generic
// method over a value type and a reference type, instance and static methods of a generic class,
// a generic method that is not async returning the Task of one that is, Task.FromResult).
// Main waits on the top task.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;

namespace Corpus;

public static class AsyncProgram
{
    public static int Run() => RunAsync().GetAwaiter().GetResult();

    private static async Task<int> RunAsync()
    {
        int chain = await Chain(5);
        int[] fanned = await Task.WhenAll(Enumerable.Range(0, 12).Select(i => Leaf(i)));
        int cached = 0;
        for (int i = 0; i < 20; i++)
        {
            cached += await Lookup(i % 4);
        }
        int values = 0;
        for (int i = 0; i < 10; i++)
        {
            values += await Half(i);
        }
        Func<int, Task<int>> lambda = async x =>
        {
            await Task.Yield();
            return x * 7;
        };
        int lambdas = (await Task.WhenAll(lambda(1), lambda(2), lambda(3))).Sum();
        int tree = await SumTree(6);
        int caught = 0;
        for (int i = 0; i < 3; i++)
        {
            try
            {
                await Fails(i);
            }
            catch (InvalidOperationException)
            {
                caught++;
            }
        }
        int throttled = await Throttled(10);
        int signalled = await FromThread(41);
        int shapes = await Shapes();
        int generic = await Generic();

        string result = $"{chain} {fanned.Sum()} {cached} {values} {lambdas} {tree} {caught} {throttled} {signalled} {shapes} {generic}";
        return Program.Expect("async", result, "89 506 320 20 42 127 3 45 42 37 40");
    }

    /// Generic async code: per round i + 3 + 3 + 0 + i + 1.
    private static async Task<int> Generic()
    {
        int sum = 0;
        for (int i = 0; i < 4; i++)
        {
            sum += await Reflect(i);
            sum += (await Reflect("ab" + i)).Length;
            sum += await new Holder<string>("xyz").Size();
            sum += await Holder<string>.Zero();
            sum += await Forward(i);
            sum += await Task.FromResult(1);
        }
        return sum;
    }

    private static async Task<T> Reflect<T>(T value)
    {
        await Task.Yield();
        return value;
    }

    private static Task<T> Forward<T>(T value) => Later(value);

    private static async Task<T> Later<T>(T value)
    {
        await Task.Delay(1);
        return value;
    }

    private sealed class Holder<T>(T value) where T : class
    {
        public async Task<int> Size()
        {
            await Task.Yield();
            return value.ToString()!.Length;
        }

        public static async Task<int> Zero()
        {
            await Task.Yield();
            return 0;
        }
    }

    /// Each level awaits the next, then a yield and a short delay.
    private static async Task<int> Chain(int depth)
    {
        if (depth == 0)
        {
            await Task.Delay(1);
            return 1;
        }
        int below = await Chain(depth - 1);
        await Task.Yield();
        return below * 2 + depth;
    }

    private static async Task<int> Leaf(int i)
    {
        await Task.Delay(1).ConfigureAwait(false);
        return Square(i);
    }

    private static int Square(int i) => i * i;

    private static readonly Dictionary<int, int> Cache = new();

    /// Completes synchronously once a key is cached: no suspension, one segment.
    private static async Task<int> Lookup(int key)
    {
        if (Cache.TryGetValue(key, out int v))
        {
            return v;
        }
        await Task.Yield();
        v = key * 10 + 1;
        lock (Cache)
        {
            Cache[key] = v;
        }
        return v;
    }

    private static async ValueTask<int> Half(int n)
    {
        if (n % 2 == 0)
        {
            return n / 2;
        }
        await Task.Yield();
        return (n - 1) / 2;
    }

    /// Async recursion over a complete binary tree of the given depth.
    private static async Task<int> SumTree(int depth)
    {
        if (depth == 0)
        {
            return 1;
        }
        Task<int> left = SumTree(depth - 1);
        Task<int> right = SumTree(depth - 1);
        if (depth % 2 == 0)
        {
            await Task.Yield();
        }
        return 1 + await left + await right;
    }

    private static async Task Fails(int i)
    {
        await Task.Delay(1);
        Thrower(i);
    }

    private static void Thrower(int i) => throw new InvalidOperationException("fail " + i);

    private static async Task<int> Throttled(int n)
    {
        using var gate = new SemaphoreSlim(2);
        async Task<int> One(int k)
        {
            await gate.WaitAsync();
            try
            {
                await Task.Delay(1);
                return k;
            }
            finally
            {
                gate.Release();
            }
        }
        int[] all = await Task.WhenAll(Enumerable.Range(0, n).Select(One));
        return all.Sum();
    }

    private static async Task<int> FromThread(int value)
    {
        var tcs = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        var t = new Thread(() =>
        {
            Thread.Sleep(2);
            tcs.SetResult(Compute(value));
        });
        t.Start();
        int r = await tcs.Task;
        t.Join();
        return r;
    }

    private static int Compute(int v) => v + 1;

    /// Where the compiler puts state machines: a generic method's (`<Echo>d__N`1`), a generic
    /// type's (`AsyncBox`1+<GetAsync>d__N`), a static local function's
    /// (`<<Shapes>g__Twice|N_0>d`), a nested async lambda's, a Task-returning (no value) method's.
    private static async Task<int> Shapes()
    {
        static async Task<int> Twice(int x)
        {
            await Task.Yield();
            return 2 * x;
        }
        int sum = 0;
        for (int i = 0; i < 3; i++)
        {
            sum += (await Echo("abc")).Length + await Echo(i) + await Twice(i);
            sum += await new AsyncBox<int>(i).GetAsync() + (await new AsyncBox<string>("xy").GetAsync()).Length;
        }
        Func<int, Task<int>> outer = async n =>
        {
            Func<Task<int>> inner = async () =>
            {
                await Task.Delay(1);
                return n + 1;
            };
            return await inner() + await inner();
        };
        sum += await outer(4);
        await Pause();
        return sum;
    }

    private static async Task<T> Echo<T>(T value)
    {
        await Task.Yield();
        return value;
    }

    private static async Task Pause() => await Task.Yield();
}

public sealed class AsyncBox<T>
{
    private readonly T value;

    public AsyncBox(T value) => this.value = value;

    public async Task<T> GetAsync()
    {
        await Task.Delay(1);
        return value;
    }
}
