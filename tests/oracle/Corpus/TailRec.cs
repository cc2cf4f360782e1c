// Program `tailrec`: self-recursive methods whose recursive call is in tail position, written the
// ordinary way (Euclid's gcd, a sum over a linked list with an accumulator, a recursive binary
// search, a digit sum). Optimized code turns a self tail call into a jump back to the method's
// start, so the body runs once per call while the probes see one Enter for the whole chain; the
// oracle counts every call. Tier-0 code makes no tail calls, and a short run never reaches
// tier 1, so the methods are AggressiveOptimization: they stand for any hot method after tier-up
// (a long-running app, or DOTNET_TieredCompilation=0, where the recursion program's QuickSort
// and Ackermann lose their tail-position calls the same way). Kept apart from the other programs
// because eltrace is expected to miscount it (tests/oracle/README.md, "Known mismatches").
using System;
using System.Runtime.CompilerServices;

namespace Corpus;

public static class TailRec
{
    public static int Run()
    {
        var sorted = new int[1024];
        for (int i = 0; i < sorted.Length; i++)
        {
            sorted[i] = i * 3;
        }
        ListNode? list = null;
        for (int i = 1; i <= 100; i++)
        {
            list = new ListNode(i, list);
        }
        long gcds = 0, sums = 0, found = 0, digits = 0;
        for (int round = 0; round < 1500; round++)
        {
            gcds += Gcd(round + 1, 360);
            if (round % 10 == 0)
            {
                sums += Sum(list, 0);
            }
            found += Search(sorted, round * 3 % 3500, 0, sorted.Length - 1) >= 0 ? 1 : 0;
            digits += DigitSum(round * 7919L, 0);
        }
        return Program.Expect("tailrec", $"{gcds} {sums} {found} {digits}", "15630 757500 1024 46434");
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public static int Gcd(int a, int b) => b == 0 ? a : Gcd(b, a % b);

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public static long Sum(ListNode? n, long acc) => n == null ? acc : Sum(n.Next, acc + n.Value);

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public static int Search(int[] a, int key, int lo, int hi)
    {
        if (lo > hi)
        {
            return -1;
        }
        int mid = (lo + hi) / 2;
        if (a[mid] == key)
        {
            return mid;
        }
        return a[mid] < key ? Search(a, key, mid + 1, hi) : Search(a, key, lo, mid - 1);
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public static long DigitSum(long n, long acc) => n == 0 ? acc : DigitSum(n / 10, acc + n % 10);

    public sealed class ListNode
    {
        public ListNode(int value, ListNode? next) => (Value, Next) = (value, next);

        public int Value { get; }

        public ListNode? Next { get; }
    }
}
