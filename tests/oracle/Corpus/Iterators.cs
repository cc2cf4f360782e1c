// Program `iterators`: `yield return` generators (an infinite prime sieve, a recursive in-order
// tree walk, a windowed pairing, an iterator with try/finally), a hand-written IEnumerable with a
// struct enumerator, and LINQ pipelines (Where/Select/GroupBy/OrderBy/Aggregate/SelectMany) over
// them with lambdas.
using System;
using System.Collections;
using System.Collections.Generic;
using System.Linq;

namespace Corpus;

public static class Iterators
{
    public static int Run()
    {
        int prime200 = Primes().Take(200).Last();
        var tree = new SortedTree();
        foreach (int k in Scramble(200))
        {
            tree.Insert(k);
        }
        bool inOrder = tree.InOrder().SequenceEqual(Enumerable.Range(0, 200));
        int twins = Pairs(Primes().Take(50)).Count(p => p.B - p.A == 2);
        long groups = Enumerable.Range(1, 400)
            .Where(n => n % 3 != 0)
            .Select(n => (Digit: n % 10, Square: (long)n * n))
            .GroupBy(t => t.Digit)
            .OrderByDescending(g => g.Key)
            .Select(g => g.Aggregate(0L, (acc, t) => (acc + t.Square) % 1_000_003))
            .Sum();
        long sumStep = 0;
        foreach (int v in new StepRange(0, 1000, 7))
        {
            sumStep += v;
        }
        int guarded = Guarded(40).Take(10).Sum();
        int distinct = Scramble(30).SelectMany(n => Enumerable.Repeat(n, n % 3)).Distinct().Count();
        string result = $"{prime200} {inOrder} {twins} {groups} {sumStep} {guarded} {closed} {distinct}";
        return Program.Expect("iterators", result, "1223 True 16 4275659 71071 45 1 20");
    }

    /// Primes, forever: trial division by the primes found so far.
    public static IEnumerable<int> Primes()
    {
        var found = new List<int>();
        for (int n = 2; ; n++)
        {
            if (IsPrime(n, found))
            {
                found.Add(n);
                yield return n;
            }
        }
    }

    private static bool IsPrime(int n, List<int> found)
    {
        foreach (int p in found)
        {
            if (p * p > n)
            {
                break;
            }
            if (n % p == 0)
            {
                return false;
            }
        }
        return true;
    }

    /// 0..n-1 in a scrambled order (a multiplicative permutation; n is not divisible by 7 or 11 here).
    private static IEnumerable<int> Scramble(int n)
    {
        for (int i = 0; i < n; i++)
        {
            yield return (int)((i * 7L + 11) % n);
        }
    }

    /// Consecutive pairs of a sequence.
    private static IEnumerable<(int A, int B)> Pairs(IEnumerable<int> xs)
    {
        using IEnumerator<int> e = xs.GetEnumerator();
        if (!e.MoveNext())
        {
            yield break;
        }
        int prev = e.Current;
        while (e.MoveNext())
        {
            yield return (prev, e.Current);
            prev = e.Current;
        }
    }

    private static int closed;

    /// An iterator whose finally runs when the consumer stops early (Take disposes it).
    private static IEnumerable<int> Guarded(int n)
    {
        try
        {
            for (int i = 0; i < n; i++)
            {
                yield return i;
            }
        }
        finally
        {
            closed++;
        }
    }

    private sealed class SortedTree
    {
        private Node? root;

        public void Insert(int key) => root = Insert(root, key);

        private static Node Insert(Node? n, int key)
        {
            if (n == null)
            {
                return new Node(key);
            }
            if (key < n.Key)
            {
                n.Left = Insert(n.Left, key);
            }
            else
            {
                n.Right = Insert(n.Right, key);
            }
            return n;
        }

        public IEnumerable<int> InOrder() => Walk(root);

        /// A recursive iterator: every level of the tree is an enumerator of its own.
        private static IEnumerable<int> Walk(Node? n)
        {
            if (n == null)
            {
                yield break;
            }
            foreach (int k in Walk(n.Left))
            {
                yield return k;
            }
            yield return n.Key;
            foreach (int k in Walk(n.Right))
            {
                yield return k;
            }
        }

        private sealed class Node
        {
            public Node(int key) => Key = key;

            public int Key { get; }

            public Node? Left { get; set; }

            public Node? Right { get; set; }
        }
    }

    /// A hand-written collection with a struct enumerator (foreach uses it without boxing).
    private readonly struct StepRange : IEnumerable<int>
    {
        private readonly int from, to, step;

        public StepRange(int from, int to, int step) => (this.from, this.to, this.step) = (from, to, step);

        public Enumerator GetEnumerator() => new(from, to, step);

        IEnumerator<int> IEnumerable<int>.GetEnumerator() => GetEnumerator();

        IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();

        public struct Enumerator : IEnumerator<int>
        {
            private readonly int to, step;
            private int next;

            public Enumerator(int from, int to, int step) => (next, this.to, this.step, Current) = (from, to, step, 0);

            public int Current { get; private set; }

            object IEnumerator.Current => Current;

            public bool MoveNext()
            {
                if (next >= to)
                {
                    return false;
                }
                Current = next;
                next += step;
                return true;
            }

            public void Reset() => throw new NotSupportedException();

            public void Dispose()
            {
            }
        }
    }
}
