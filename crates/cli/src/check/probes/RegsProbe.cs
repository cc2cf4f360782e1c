// Register probes: methods whose results depend on every argument register (6 integer, 8
// floating-point, plus stack arguments) and on every return register (RAX, RDX, XMM0, XMM1),
// called from an optimized driver that keeps values in callee-saved registers across the
// calls. A hook that damages a register the JIT relies on makes a result wrong (exit 3) or
// crashes the program. Leaf(x) is the method whose Enter/Leave the fast-path check compares.
using System.Runtime.CompilerServices;

namespace Probes
{
    public struct LongPair { public long A; public long B; }
    public struct DoublePair { public double A; public double B; }
    public struct LongDouble { public long A; public double B; }

    public static class RegsProbe
    {
        public const int Rounds = 300;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Leaf(int x) => x + 1;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static long Ints(long a, long b, long c, long d, long e, long f, long g, long h) =>
            a + 2 * b + 3 * c + 5 * d + 7 * e + 11 * f + 13 * g + 17 * h;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static double Doubles(double a, double b, double c, double d, double e, double f,
            double g, double h, double i, double j) =>
            a + 2 * b + 3 * c + 5 * d + 7 * e + 11 * f + 13 * g + 17 * h + 19 * i + 23 * j;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static float Floats(float a, int b, float c, long d) => a * 2 + b + c * 4 + d;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static LongPair Pair(long a, long b) => new LongPair { A = a + 1, B = b + 2 };

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static DoublePair DPair(double a, double b) => new DoublePair { A = a * 2, B = b * 3 };

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static LongDouble Mixed(long a, double b) => new LongDouble { A = a - 1, B = b + 0.5 };

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static string Concat(string a, object b) => a + b.ToString();

        [MethodImpl(MethodImplOptions.AggressiveOptimization)]
        public static bool Run()
        {
            long bad = 0;
            long k1 = 101, k2 = 202, k3 = 303, k4 = 404, k5 = 505, k6 = 606;
            for (int r = 0; r < Rounds; r++)
            {
                if (Leaf(r) != r + 1) bad++;
                long ints = Ints(r, 2, 3, 4, 5, 6, 7, 8);
                if (ints != r + 2 * 2 + 3 * 3 + 5 * 4 + 7 * 5 + 11 * 6 + 13 * 7 + 17 * 8) bad++;
                double dbl = Doubles(r, 2, 3, 4, 5, 6, 7, 8, 9, 10);
                if (dbl != r + 2.0 * 2 + 3 * 3 + 5 * 4 + 7 * 5 + 11 * 6 + 13 * 7 + 17 * 8 + 19 * 9 + 23 * 10) bad++;
                if (Floats(1.5f, r, 0.25f, 7) != 1.5f * 2 + r + 0.25f * 4 + 7) bad++;
                LongPair p = Pair(r, k1);
                if (p.A != r + 1 || p.B != k1 + 2) bad++;
                DoublePair q = DPair(r, 1.5);
                if (q.A != r * 2.0 || q.B != 4.5) bad++;
                LongDouble m = Mixed(k2, r);
                if (m.A != k2 - 1 || m.B != r + 0.5) bad++;
                if (Concat("x", r) != "x" + r.ToString()) bad++;
                // Values kept in callee-saved registers across the calls above.
                k1 += 1; k2 += 2; k3 += 3; k4 += 4; k5 += 5; k6 += 6;
            }
            bool keep = k1 == 101 + Rounds && k2 == 202 + 2 * Rounds && k3 == 303 + 3 * Rounds
                && k4 == 404 + 4 * Rounds && k5 == 505 + 5 * Rounds && k6 == 606 + 6 * Rounds;
            Program.Report("regs.bad", bad);
            Program.Report("regs.callee_saved_ok", keep ? 1 : 0);
            Program.Report("regs.leaf_calls", Rounds);
            return bad == 0 && keep;
        }
    }
}
