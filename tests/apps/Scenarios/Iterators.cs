// Scenario `iterators`: `yield return` iterators enumerated in every way eltrace's iterator
// model has to tell apart (README "Iterators"): one enumerable enumerated several times, an
// enumeration abandoned by LINQ's Take/First/Skip or by `break`, nested and recursive
// iterators, LINQ over iterators, an iterator with try/finally, an iterator method that returns
// the enumerator itself, an iterator that throws, an enumerator drained by two helpers, a
// generic iterator, and one enumeration consumed across awaits on pool threads.
//
// Every iterator body counts itself (Tally, plain array increments, no calls): Starts at the
// top of the body (the first MoveNext of an enumeration), Yields before each `yield return`,
// Resumes right after it (a later MoveNext continued there), Ends where the body finishes (the
// MoveNext that returns false). So, per iterator:
//   MoveNext calls = Starts + Resumes;   enumerations = Starts;   yields = Yields;
//   completed = Ends;   faulted = enumerations that threw;   abandoned = the rest
//   (the consumer stopped after a yield; LINQ and foreach dispose them).
// The program checks these counters against the constants below (E: expected rows), which
// crates/cli/tests/e2e/state_machines.rs checks the report against: kickoff calls, MoveNext calls,
// enumerations, yields, abandoned, faulted.
//
//   iterator   kickoff calls  MoveNext  enumerations  yields  abandoned  faulted  how
//   Sequence   3 (getter)     1012      3             1010    1          0        Take(10).Sum(), foreach, Count(); N = 500
//   Count      2              18        3             16      1          0        stored enumerable: Sum(), Max(); foreach with break at 5
//   Inner      4              10        4             6       0          0        nested: Flatten(4) runs Inner(0..3)
//   Flatten    1              7         1             6       0          0        Flatten(4).ToList()
//   Walk       31 + 12        80 + 25   43            49 + 17 4          0        recursive, 15-node tree: ToArray(); First(x > 3)
//   Squares    2              32        2             30      0          0        Where/Select/ToList over 20; Zip's first (10)
//   Cubes      1              10        1             10      1          0        Zip's second (12): abandoned when Squares ends
//   Primes     1              4         1             4       1          0        Skip(3).First()
//   Guarded    2              14        2             13      1          0        Take(10) of 40 (finally runs), Sum() of 3
//   Bag        2 (GetEnumerator) 7      2             6       1          0        IEnumerator-returning iterator: foreach, break
//   Faulty     1              4         1             3       0          1        throws at the 4th MoveNext
//   Numbers    1              5         1             5       1          0        one enumerator, two Drain helpers, then Dispose
//   Repeat``1  2              7         2             5       0          0        Repeat(7, 3).Sum(), Repeat("a", 2).Count()
//   Ticks      1              5         1             4       0          0        foreach with await Task.Yield() per element
using System;
using System.Collections;
using System.Collections.Generic;
using System.Linq;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace Scenarios;

public static class IteratorsScenario
{
    public const int N = 500;

    // Iterator ids (indices into the tallies).
    private const int Seq = 0, Cnt = 1, Inn = 2, Fla = 3, Wlk = 4, Sqr = 5, Cub = 6, Prm = 7,
        Grd = 8, Bg = 9, Flt = 10, Num = 11, Rep = 12, Tck = 13, Count = 14;

    private static readonly string[] Names =
    {
        "Sequence", "Count", "Inner", "Flatten", "Walk", "Squares", "Cubes", "Primes",
        "Guarded", "Bag", "Faulty", "Numbers", "Repeat", "Ticks",
    };

    // Expected per iterator: MoveNext calls, enumerations, yields, completed, faulted.
    private static readonly int[,] Expected =
    {
        { 1012, 3, 1010, 2, 0 },  // Sequence
        { 18, 3, 16, 2, 0 },      // Count
        { 10, 4, 6, 4, 0 },       // Inner
        { 7, 1, 6, 1, 0 },        // Flatten
        { 105, 43, 66, 39, 0 },   // Walk
        { 32, 2, 30, 2, 0 },      // Squares
        { 10, 1, 10, 0, 0 },      // Cubes
        { 4, 1, 4, 0, 0 },        // Primes
        { 14, 2, 13, 1, 0 },      // Guarded
        { 7, 2, 6, 1, 0 },        // Bag
        { 4, 1, 3, 0, 1 },        // Faulty
        { 5, 1, 5, 0, 0 },        // Numbers
        { 7, 2, 5, 2, 0 },        // Repeat
        { 5, 1, 4, 1, 0 },        // Ticks
    };

    private static readonly int[] Starts = new int[Count];
    private static readonly int[] Yields = new int[Count];
    private static readonly int[] Resumes = new int[Count];
    private static readonly int[] Ends = new int[Count];
    private static int faults;
    private static int finallies;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run()
    {
        Check.Equal("sequences", RunSequences(), 45L + N * (N - 1L) / 2 + N);
        Check.Equal("count", RunCount(), 10 + 4 + 5);
        Check.Equal("nested", RunNested(), 6);
        Check.Equal("walk", RunWalk(), 4);
        Check.Equal("linq", RunLinq(), 3 + 7);
        Check.Equal("guarded", RunGuarded(), 45 + 3);
        Check.Equal("bag", RunBag(), 6 + 1);
        Check.Equal("faulty", RunFaulty(), 3);
        Check.Equal("drain", RunDrain(), 15);
        Check.Equal("repeat", RunRepeat(), 23);
        Check.Equal("ticks", RunTicks().GetAwaiter().GetResult(), 6);
        Check.Equal("faults", faults, 1);
        Check.Equal("finallies", finallies, 2);
        long moveNexts = 0;
        for (int i = 0; i < Count; i++)
        {
            Check.Equal($"{Names[i]} MoveNext", Starts[i] + Resumes[i], Expected[i, 0]);
            Check.Equal($"{Names[i]} enumerations", Starts[i], Expected[i, 1]);
            Check.Equal($"{Names[i]} yields", Yields[i], Expected[i, 2]);
            Check.Equal($"{Names[i]} completed", Ends[i], Expected[i, 3]);
            moveNexts += Starts[i] + Resumes[i];
        }
        Console.WriteLine($"iterators MoveNext calls = {moveNexts}");
        return Check.Done("iterators");
    }

    // ---- One enumerable, several enumerations ----

    /// An iterator property: each `Sequence` is a call of its getter (the kickoff).
    public static IEnumerable<int> Sequence
    {
        get
        {
            Starts[Seq]++;
            for (int i = 0; i < N; i++)
            {
                Yields[Seq]++;
                yield return i;
                Resumes[Seq]++;
            }
            Ends[Seq]++;
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static long RunSequences()
    {
        long total = Sequence.Take(10).Sum();
        foreach (int x in Sequence)
        {
            total += x;
        }
        total += Sequence.Count();
        return total;
    }

    private static IEnumerable<int> CountTo(int n)
    {
        Starts[Cnt]++;
        for (int i = 0; i < n; i++)
        {
            Yields[Cnt]++;
            yield return i;
            Resumes[Cnt]++;
        }
        Ends[Cnt]++;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int RunCount()
    {
        IEnumerable<int> stored = CountTo(5);
        int total = stored.Sum() + stored.Max();
        foreach (int x in CountTo(100))
        {
            if (x == 5)
            {
                total += x;
                break;
            }
        }
        return total;
    }

    // ---- Nested and recursive ----

    private static IEnumerable<int> Inner(int n)
    {
        Starts[Inn]++;
        for (int i = 0; i < n; i++)
        {
            Yields[Inn]++;
            yield return i;
            Resumes[Inn]++;
        }
        Ends[Inn]++;
    }

    private static IEnumerable<int> Flatten(int m)
    {
        Starts[Fla]++;
        for (int k = 0; k < m; k++)
        {
            foreach (int x in Inner(k))
            {
                Yields[Fla]++;
                yield return x;
                Resumes[Fla]++;
            }
        }
        Ends[Fla]++;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int RunNested() => Flatten(4).ToList().Count;

    private sealed class Node
    {
        public Node(int key, Node? left, Node? right) => (Key, Left, Right) = (key, left, right);

        public int Key { get; }

        public Node? Left { get; }

        public Node? Right { get; }
    }

    /// A complete binary search tree over lo..hi.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static Node? Build(int lo, int hi)
    {
        if (lo > hi)
        {
            return null;
        }
        int mid = (lo + hi) / 2;
        return new Node(mid, Build(lo, mid - 1), Build(mid + 1, hi));
    }

    /// In order, recursively: every subtree is an enumeration of its own, consumed by the
    /// enumeration of its parent.
    private static IEnumerable<int> Walk(Node? n)
    {
        Starts[Wlk]++;
        if (n == null)
        {
            Ends[Wlk]++;
            yield break;
        }
        foreach (int k in Walk(n.Left))
        {
            Yields[Wlk]++;
            yield return k;
            Resumes[Wlk]++;
        }
        Yields[Wlk]++;
        yield return n.Key;
        Resumes[Wlk]++;
        foreach (int k in Walk(n.Right))
        {
            Yields[Wlk]++;
            yield return k;
            Resumes[Wlk]++;
        }
        Ends[Wlk]++;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int RunWalk()
    {
        Node? root = Build(0, 14);
        int[] all = Walk(root).ToArray();
        for (int i = 0; i < all.Length; i++)
        {
            Check.Equal("walk order", all[i], i);
        }
        Check.Equal("walk length", all.Length, 15);
        // Abandoned in the middle: the enumerations on the path to 4 stop after a yield.
        return Walk(root).First(x => x > 3);
    }

    // ---- LINQ over iterators ----

    private static IEnumerable<int> Squares(int n)
    {
        Starts[Sqr]++;
        for (int i = 0; i < n; i++)
        {
            Yields[Sqr]++;
            yield return i * i;
            Resumes[Sqr]++;
        }
        Ends[Sqr]++;
    }

    private static IEnumerable<int> Cubes(int n)
    {
        Starts[Cub]++;
        for (int i = 0; i < n; i++)
        {
            Yields[Cub]++;
            yield return i * i * i;
            Resumes[Cub]++;
        }
        Ends[Cub]++;
    }

    /// Primes, forever.
    private static IEnumerable<int> Primes()
    {
        Starts[Prm]++;
        for (int n = 2; ; n++)
        {
            bool prime = true;
            for (int d = 2; d * d <= n; d++)
            {
                prime &= n % d != 0;
            }
            if (prime)
            {
                Yields[Prm]++;
                yield return n;
                Resumes[Prm]++;
            }
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int RunLinq()
    {
        List<int> odd = Squares(20).Where(x => x % 2 == 1).Select(x => x + 1).ToList();
        Check.Equal("odd squares", odd.Count, 10);
        // Zip stops when Squares(10) ends, after Cubes(12) gave its 10th element.
        int zipped = Squares(10).Zip(Cubes(12), (a, b) => b - a).Count(d => d >= 0);
        Check.Equal("zipped", zipped, 10);
        // Skip(3) moves the primes on without reading them; First reads the fourth, 7.
        int seventh = Primes().Skip(3).First();
        return (odd.Count == 10 ? 3 : 0) + seventh;
    }

    // ---- try/finally, an enumerator-returning iterator, an exception ----

    private static IEnumerable<int> Guarded(int n)
    {
        Starts[Grd]++;
        try
        {
            for (int i = 0; i < n; i++)
            {
                Yields[Grd]++;
                yield return i;
                Resumes[Grd]++;
            }
            Ends[Grd]++;
        }
        finally
        {
            finallies++;
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int RunGuarded() => Guarded(40).Take(10).Sum() + Guarded(3).Sum();

    /// A collection whose GetEnumerator is the iterator method: the kickoff returns the
    /// enumerator itself (no IEnumerable state machine, no GetEnumerator of its own).
    private sealed class Bag : IEnumerable<int>
    {
        private readonly int n;

        public Bag(int n) => this.n = n;

        public IEnumerator<int> GetEnumerator()
        {
            Starts[Bg]++;
            for (int i = 0; i < n; i++)
            {
                Yields[Bg]++;
                yield return i;
                Resumes[Bg]++;
            }
            Ends[Bg]++;
        }

        IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int RunBag()
    {
        var bag = new Bag(4);
        int total = 0;
        foreach (int x in bag)
        {
            total += x;
        }
        foreach (int x in bag)
        {
            if (x == 1)
            {
                total += x;
                break;
            }
        }
        return total;
    }

    private static IEnumerable<int> Faulty(int n)
    {
        Starts[Flt]++;
        for (int i = 0; i < n; i++)
        {
            if (i == 3)
            {
                throw new InvalidOperationException("faulty");
            }
            Yields[Flt]++;
            yield return i;
            Resumes[Flt]++;
        }
        Ends[Flt]++;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int RunFaulty()
    {
        int total = 0;
        try
        {
            foreach (int x in Faulty(5))
            {
                total += x;
            }
        }
        catch (InvalidOperationException)
        {
            faults++;
        }
        return total;
    }

    // ---- One enumerator, moved between methods ----

    private static IEnumerable<int> Numbers(int n)
    {
        Starts[Num]++;
        for (int i = 1; i <= n; i++)
        {
            Yields[Num]++;
            yield return i;
            Resumes[Num]++;
        }
        Ends[Num]++;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int Drain(IEnumerator<int> e, int k)
    {
        int sum = 0;
        for (int i = 0; i < k && e.MoveNext(); i++)
        {
            sum += e.Current;
        }
        return sum;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int RunDrain()
    {
        using IEnumerator<int> e = Numbers(6).GetEnumerator();
        return Drain(e, 2) + Drain(e, 3);
    }

    // ---- A generic iterator ----

    private static IEnumerable<T> Repeat<T>(T value, int n)
    {
        Starts[Rep]++;
        for (int i = 0; i < n; i++)
        {
            Yields[Rep]++;
            yield return value;
            Resumes[Rep]++;
        }
        Ends[Rep]++;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int RunRepeat() => Repeat(7, 3).Sum() + Repeat("a", 2).Count();

    // ---- Consumed across awaits ----

    private static IEnumerable<int> Ticks(int n)
    {
        Starts[Tck]++;
        for (int i = 0; i < n; i++)
        {
            Yields[Tck]++;
            yield return i;
            Resumes[Tck]++;
        }
        Ends[Tck]++;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static async Task<int> RunTicks()
    {
        int total = 0;
        foreach (int x in Ticks(4))
        {
            await Task.Yield();
            total += x;
        }
        return total;
    }
}
