// Program `threads`: work on several threads at once. Dedicated threads (ThreadStart and
// ParameterizedThreadStart) with a ThreadLocal and a [ThreadStatic] counter, a lock-protected
// account shared by all of them, Parallel.For and Parallel.ForEach bodies, Task.Run tasks waited
// with WaitAll, ThreadPool work items counted down by a CountdownEvent, and a producer/consumer
// pipeline over a bounded BlockingCollection. Every user method runs a fixed number of times
// whatever the scheduling (no user code in a wait condition, no per-thread initializers on pool
// threads).
using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;

namespace Corpus;

public static class Threads
{
    [ThreadStatic]
    private static int perThread;

    private static readonly ThreadLocal<List<int>> Seen = new(() => new List<int>(), trackAllValues: true);

    public static int Run()
    {
        var account = new Account();
        var threads = new List<Thread>();
        for (int t = 0; t < 4; t++)
        {
            var th = new Thread(Worker) { Name = "worker-" + t };
            threads.Add(th);
            th.Start(new WorkerArgs(t, account));
        }
        var plain = new Thread(PlainWorker);
        plain.Start();
        threads.Add(plain);
        foreach (Thread th in threads)
        {
            th.Join();
        }
        long seen = Seen.Values.Sum(l => l.Count);

        long collatz = 0;
        Parallel.For(1, 3000, n => Interlocked.Add(ref collatz, CollatzSteps(n)));
        var words = new[] { "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta" };
        var lengths = new ConcurrentDictionary<string, int>();
        Parallel.ForEach(words, w => lengths[w] = Score(w));

        Task<long>[] tasks = Enumerable.Range(0, 8).Select(i => Task.Run(() => SumOfDivisors(5000 + i))).ToArray();
        Task.WaitAll(tasks);
        long divisors = tasks.Sum(t => t.Result);

        using var done = new CountdownEvent(16);
        long pooled = 0;
        for (int i = 0; i < 16; i++)
        {
            int k = i;
            ThreadPool.QueueUserWorkItem(_ =>
            {
                Interlocked.Add(ref pooled, Fib(k));
                done.Signal();
            });
        }
        done.Wait();

        long consumed = Pipeline(500);

        string result = $"{account.Balance} {account.Operations} {seen} {collatz} {lengths.Values.Sum()} {divisors} {pooled} {consumed}";
        return Program.Expect("threads", result, "31750 1000 1100 215015 365 66199 1596 25290");
    }

    private sealed record WorkerArgs(int Id, Account Account);

    private static void Worker(object? state)
    {
        var args = (WorkerArgs)state!;
        for (int i = 0; i < 250; i++)
        {
            if (i % 2 == 0)
            {
                args.Account.Deposit(args.Id + i);
            }
            else
            {
                args.Account.Withdraw(i / 2);
            }
            Note(i);
        }
    }

    private static void PlainWorker()
    {
        for (int i = 0; i < 100; i++)
        {
            Note(i);
        }
    }

    private static void Note(int i)
    {
        perThread++;
        Seen.Value!.Add(i);
    }

    private sealed class Account
    {
        private readonly object gate = new();
        private long balance;
        private int operations;

        public long Balance
        {
            get
            {
                lock (gate)
                {
                    return balance;
                }
            }
        }

        public int Operations => Volatile.Read(ref operations);

        public void Deposit(long amount)
        {
            lock (gate)
            {
                balance += amount;
                operations++;
            }
        }

        public void Withdraw(long amount)
        {
            lock (gate)
            {
                balance -= amount;
                operations++;
            }
        }
    }

    private static int CollatzSteps(long n)
    {
        int steps = 0;
        while (n != 1)
        {
            n = n % 2 == 0 ? n / 2 : 3 * n + 1;
            steps++;
        }
        return steps;
    }

    private static int Score(string w) => w.Sum(c => c - 'a' + 1);

    private static long SumOfDivisors(int n)
    {
        long s = 0;
        for (int d = 1; d <= n; d++)
        {
            if (IsDivisor(n, d))
            {
                s += d;
            }
        }
        return s;
    }

    private static bool IsDivisor(int n, int d) => n % d == 0;

    private static long Fib(int n) => n < 2 ? n : Fib(n - 1) + Fib(n - 2);

    /// A producer thread and two consumer threads over a bounded queue.
    private static long Pipeline(int items)
    {
        using var queue = new BlockingCollection<int>(boundedCapacity: 16);
        long total = 0;
        var producer = new Thread(() =>
        {
            for (int i = 0; i < items; i++)
            {
                queue.Add(Produce(i));
            }
            queue.CompleteAdding();
        });
        Thread[] consumers = Enumerable.Range(0, 2).Select(_ => new Thread(() =>
        {
            foreach (int item in queue.GetConsumingEnumerable())
            {
                Interlocked.Add(ref total, Consume(item));
            }
        })).ToArray();
        producer.Start();
        foreach (Thread c in consumers)
        {
            c.Start();
        }
        producer.Join();
        foreach (Thread c in consumers)
        {
            c.Join();
        }
        return total;
    }

    private static int Produce(int i) => i * 3 % 101;

    private static int Consume(int item) => item + 1;
}
