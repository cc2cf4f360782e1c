// Scenario `tail-loop [N]` (issue #13, point 2): a quicksort whose recursive Sort ends in a
// self-recursive call in tail position, `Sort(array, comparer, p + 1, right)`. Optimized
// code (tier 1, or any code with DOTNET_TieredCompilation=0) turns that call into a jump back
// to the start of Sort, and the JIT calls no profiler probe for it: the profiler sees one
// Enter/Leave for a whole chain of such calls. With DOTNET_TailCallLoopOpt=0 the JIT makes
// it a real tail call instead (a Tailcall event, then Sort's Enter at the same stack pointer).
// Tier-0 code makes every call an ordinary call. Sort is not NoInlining: the runtime refuses
// tail calls from a NoInlining method (see TailCalls.cs); the profiler disables inlining.
//
// Sort counts its own invocations in SortCalls (a loop iteration made of a tail call counts
// too) and the program prints the total, so the trace can be compared with the program.
// Sorts 2 arrays of N pseudo-random ints (a fixed linear congruential sequence per array,
// so the counts are the same in every run). N defaults to 20000 (larger sorts make the
// profiler drop events on a busy machine: they produce events faster than the writer drains
// them); for the default:
//   TailLoopScenario.Run 1; Sort 53074 calls (26536 Partition calls, each followed by
//   two Sort calls, plus 2 outer calls: 2 + 2 * 26536); of those 26536 are calls in tail
//   position (the second Sort call of each partitioned range); Partition 26536 calls.
// With TailCallLoopOpt=0 and optimized Sort: 53074 Sort Enters, of which 26536 after a
// Tailcall event of Sort. `eltrace record` sets DOTNET_TailCallLoopOpt=0 for the program
// unless --keep-tail-loops: then the counts are exact with tiering on and off
// (crates/cli/tests/e2e/tail_calls.rs); with --keep-tail-loops and
// DOTNET_TieredCompilation=0, Sort shows 26538 calls (2 + 26536).
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;

namespace Scenarios;

public static class TailLoopScenario
{
    public const int DefaultN = 20000;
    public const int Arrays = 2;
    public const long ExpectedSortCalls = 53074;
    public const long ExpectedPartitionCalls = 26536;

    public static long SortCalls;
    public static long PartitionCalls;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run(string[] args)
    {
        int n = args.Length > 1 ? int.Parse(args[1]) : DefaultN;
        IComparer<int> comparer = Comparer<int>.Default;
        for (int a = 0; a < Arrays; a++)
        {
            int[] array = Generate(n, (uint)(a + 1));
            Sort(array, comparer, 0, array.Length - 1);
            int unsorted = 0;
            for (int i = 1; i < array.Length; i++)
            {
                unsorted += array[i - 1] > array[i] ? 1 : 0;
            }
            Check.Equal("unsorted pairs", unsorted, 0);
        }
        if (n == DefaultN)
        {
            Check.Equal("Sort calls", SortCalls, ExpectedSortCalls);
            Check.Equal("Partition calls", PartitionCalls, ExpectedPartitionCalls);
        }
        Console.WriteLine($"tail-loop Sort calls = {SortCalls}, Partition calls = {PartitionCalls}");
        return Check.Done("tail-loop");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int[] Generate(int n, uint seed)
    {
        int[] array = new int[n];
        uint x = seed;
        for (int i = 0; i < n; i++)
        {
            x = x * 1103515245 + 12345;
            array[i] = (int)(x >> 8);
        }
        return array;
    }

    // The shape of the Sort: partition, sort the left part, then a self-recursive
    // call in tail position for the right part.
    private static void Sort(int[] array, IComparer<int> comparer, int left, int right)
    {
        SortCalls++;
        if (left >= right)
        {
            return;
        }
        int p = Partition(array, comparer, left, right);
        Sort(array, comparer, left, p - 1);
        Sort(array, comparer, p + 1, right);
    }

    // Lomuto partition around the middle element; returns the pivot's final index.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int Partition(int[] array, IComparer<int> comparer, int left, int right)
    {
        PartitionCalls++;
        int mid = left + (right - left) / 2;
        (array[mid], array[right]) = (array[right], array[mid]);
        int pivot = array[right];
        int store = left;
        for (int i = left; i < right; i++)
        {
            if (comparer.Compare(array[i], pivot) < 0)
            {
                (array[i], array[store]) = (array[store], array[i]);
                store++;
            }
        }
        (array[store], array[right]) = (array[right], array[store]);
        return store;
    }
}
