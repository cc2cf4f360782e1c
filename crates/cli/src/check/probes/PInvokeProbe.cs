// P/Invoke and reverse P/Invoke: getpid() three times, and qsort() over 16 ints with an
// [UnmanagedCallersOnly] comparer passed as a function pointer, so native code (libc) calls
// back into managed code. The program counts the comparer's calls itself.
using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Probes
{
    public static unsafe class PInvokeProbe
    {
        public const int GetPidCalls = 3;
        static int compares;

        [DllImport("libc.so.6", EntryPoint = "getpid")]
        static extern int GetPid();

        [DllImport("libc.so.6", EntryPoint = "qsort")]
        static extern void QSort(void* items, nuint count, nuint size, delegate* unmanaged<void*, void*, int> compare);

        [UnmanagedCallersOnly]
        static int Compare(void* a, void* b)
        {
            compares++;
            int x = *(int*)a, y = *(int*)b;
            return x < y ? -1 : x > y ? 1 : 0;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static bool Run()
        {
            int pid = 0;
            for (int i = 0; i < GetPidCalls; i++)
            {
                pid = GetPid();
            }
            int[] items = { 9, 3, 14, 1, 7, 12, 0, 5, 15, 2, 11, 6, 13, 4, 10, 8 };
            fixed (int* p = items)
            {
                QSort(p, (nuint)items.Length, sizeof(int), &Compare);
            }
            bool sorted = true;
            for (int i = 0; i < items.Length; i++)
            {
                sorted &= items[i] == i;
            }
            Program.Report("pinvoke.getpid_calls", GetPidCalls);
            Program.Report("pinvoke.pid_ok", pid == Environment.ProcessId ? 1 : 0);
            Program.Report("pinvoke.compares", compares);
            Program.Report("pinvoke.sorted", sorted ? 1 : 0);
            return sorted && pid == Environment.ProcessId && compares > 0;
        }
    }
}
