// Program `recursion`: classic recursive algorithms written the ordinary way: quicksort and
// merge sort over a pseudo-random array, the n-queens backtracking search, the Ackermann
// function, towers of Hanoi, a memoized partition count, and a recursive-descent walk of a
// binary tree built recursively.
using System;
using System.Collections.Generic;

namespace Corpus;

public static class Recursion
{
    public static int Run()
    {
        int[] data = RandomArray(800, seed: 12345);
        int[] q = (int[])data.Clone();
        QuickSort(q, 0, q.Length - 1);
        int[] m = MergeSort(data);
        bool sorted = IsSorted(q) && IsSorted(m) && Same(q, m);
        var moves = new List<(int, int)>();
        Hanoi(10, 0, 2, 1, moves);
        long p60 = Partitions(60, 60, new Dictionary<(int, int), long>());
        Node tree = Build(1, 9);
        string result = $"{sorted} {Queens(8)} {Ackermann(2, 3)} {moves.Count} {p60} {tree.Count()} {tree.Height()}";
        return Program.Expect("recursion", result, "True 92 9 1023 966467 511 9");
    }

    private static int[] RandomArray(int n, int seed)
    {
        var a = new int[n];
        uint x = (uint)seed;
        for (int i = 0; i < n; i++)
        {
            x = x * 1664525 + 1013904223;
            a[i] = (int)(x >> 8) % 100_000;
        }
        return a;
    }

    public static void QuickSort(int[] a, int lo, int hi)
    {
        if (lo >= hi)
        {
            return;
        }
        int p = Partition(a, lo, hi);
        QuickSort(a, lo, p - 1);
        QuickSort(a, p + 1, hi);
    }

    private static int Partition(int[] a, int lo, int hi)
    {
        int pivot = a[(lo + hi) / 2];
        Swap(a, (lo + hi) / 2, hi);
        int store = lo;
        for (int i = lo; i < hi; i++)
        {
            if (a[i] < pivot)
            {
                Swap(a, i, store++);
            }
        }
        Swap(a, store, hi);
        return store;
    }

    private static void Swap(int[] a, int i, int j) => (a[i], a[j]) = (a[j], a[i]);

    public static int[] MergeSort(int[] a)
    {
        if (a.Length <= 1)
        {
            return a;
        }
        int mid = a.Length / 2;
        int[] left = MergeSort(a[..mid]);
        int[] right = MergeSort(a[mid..]);
        return Merge(left, right);
    }

    private static int[] Merge(int[] l, int[] r)
    {
        var o = new int[l.Length + r.Length];
        int i = 0, j = 0, k = 0;
        while (i < l.Length && j < r.Length)
        {
            o[k++] = l[i] <= r[j] ? l[i++] : r[j++];
        }
        while (i < l.Length)
        {
            o[k++] = l[i++];
        }
        while (j < r.Length)
        {
            o[k++] = r[j++];
        }
        return o;
    }

    private static bool IsSorted(int[] a)
    {
        for (int i = 1; i < a.Length; i++)
        {
            if (a[i - 1] > a[i])
            {
                return false;
            }
        }
        return true;
    }

    private static bool Same(int[] a, int[] b) => a.AsSpan().SequenceEqual(b);

    public static int Queens(int n) => Place(new int[n], 0);

    private static int Place(int[] cols, int row)
    {
        if (row == cols.Length)
        {
            return 1;
        }
        int found = 0;
        for (int c = 0; c < cols.Length; c++)
        {
            if (Safe(cols, row, c))
            {
                cols[row] = c;
                found += Place(cols, row + 1);
            }
        }
        return found;
    }

    private static bool Safe(int[] cols, int row, int c)
    {
        for (int r = 0; r < row; r++)
        {
            if (cols[r] == c || Math.Abs(cols[r] - c) == row - r)
            {
                return false;
            }
        }
        return true;
    }

    public static int Ackermann(int m, int n)
    {
        if (m == 0)
        {
            return n + 1;
        }
        if (n == 0)
        {
            return Ackermann(m - 1, 1);
        }
        return Ackermann(m - 1, Ackermann(m, n - 1));
    }

    public static void Hanoi(int n, int from, int to, int via, List<(int, int)> moves)
    {
        if (n == 0)
        {
            return;
        }
        Hanoi(n - 1, from, via, to, moves);
        moves.Add((from, to));
        Hanoi(n - 1, via, to, from, moves);
    }

    /// The number of partitions of n into parts of at most k.
    public static long Partitions(int n, int k, Dictionary<(int, int), long> memo)
    {
        if (n == 0)
        {
            return 1;
        }
        if (n < 0 || k == 0)
        {
            return 0;
        }
        if (memo.TryGetValue((n, k), out long v))
        {
            return v;
        }
        v = Partitions(n - k, k, memo) + Partitions(n, k - 1, memo);
        memo[(n, k)] = v;
        return v;
    }

    private static Node Build(int label, int depth) =>
        depth == 1 ? new Node(label, null, null) : new Node(label, Build(2 * label, depth - 1), Build(2 * label + 1, depth - 1));

    private sealed class Node
    {
        private readonly Node? left;
        private readonly Node? right;

        public Node(int label, Node? left, Node? right)
        {
            Label = label;
            this.left = left;
            this.right = right;
        }

        public int Label { get; }

        public int Count() => 1 + (left?.Count() ?? 0) + (right?.Count() ?? 0);

        public int Height() => 1 + Math.Max(left?.Height() ?? 0, right?.Height() ?? 0);
    }
}
