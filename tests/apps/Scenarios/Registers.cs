// Scenarios `fp`, `args` and `structs`: code whose results depend on every argument and return
// register arriving intact, so that a probe that breaks the JIT's probe contract (checked by
// the e2e suite with ELTRACE_TEST_TRASH_REGISTERS=1) makes the program compute wrong values.
// Each scenario compares its results with values known in advance (exact in binary floating
// point) and exits with 1 on any difference, printing what differed.
//
// Calls (each method is NoInlining; the e2e tests count them):
//   fp:      FpScenario.Run 1, Poly 1000, Mix8 1000, Scale 1000, Dot4 1000 (float, Vector128 args)
//   args:    ArgsScenario.Run 1, Many 500, Mixed 500, Stack 500
//   structs: StructsScenario.Run 1, MakePair 300, MakeDoubles 300, MakeMixed 300,
//            MakeFlipped 300, MakeLarge 300, SumLarge 300, MakeFloats 300
using System;
using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics;

namespace Scenarios;

static class Check
{
    public static int Failures;

    public static void Equal<T>(string what, T got, T want) where T : IEquatable<T>
    {
        if (!got.Equals(want))
        {
            Failures++;
            if (Failures <= 10)
            {
                Console.WriteLine($"WRONG {what}: got {got}, want {want}");
            }
        }
    }

    public static int Done(string scenario)
    {
        Console.WriteLine(Failures == 0 ? $"{scenario}: all results correct" : $"{scenario}: {Failures} wrong results");
        return Failures == 0 ? 0 : 1;
    }
}

public static class FpScenario
{
    public const int N = 1000;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run()
    {
        double acc = 0.0;
        float facc = 0f;
        for (int i = 0; i < N; i++)
        {
            double x = i * 0.5;
            // Values live in XMM registers across the calls.
            double p = Poly(x, 1.0, 2.0, 3.0);
            Check.Equal("Poly", p, 1.0 + 2.0 * x + 3.0 * x * x);
            double m = Mix8(x, x + 1, x + 2, x + 3, x + 4, x + 5, x + 6, x + 7);
            Check.Equal("Mix8", m, 36.0 * x + 168.0);
            float s = Scale(i, 0.25f);
            Check.Equal("Scale", s, i * 0.25f);
            var v = Vector128.Create((float)i, 1f, 2f, 3f);
            float d = Dot4(v, Vector128.Create(1f, 2f, 3f, 4f));
            Check.Equal("Dot4", d, i + 2f + 6f + 12f);
            acc += p + m;
            facc += s + d;
        }
        // Sums of exactly representable values, computed in closed form.
        double wantAcc = 0.0;
        float wantF = 0f;
        for (int i = 0; i < N; i++)
        {
            double x = i * 0.5;
            wantAcc += 1.0 + 2.0 * x + 3.0 * x * x + 36.0 * x + 168.0;
            wantF += i * 0.25f + i + 20f;
        }
        Check.Equal("fp acc", acc, wantAcc);
        Check.Equal("fp facc", facc, wantF);
        return Check.Done("fp");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static double Poly(double x, double a, double b, double c) => a + b * x + c * x * x;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static double Mix8(double a, double b, double c, double d, double e, double f, double g, double h)
        => a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static float Scale(int i, float f) => i * f;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static float Dot4(Vector128<float> a, Vector128<float> b) => Vector128.Dot(a, b);
}

public static class ArgsScenario
{
    public const int N = 500;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run()
    {
        long total = 0;
        for (int i = 0; i < N; i++)
        {
            long m = Many(i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7, i + 8, i + 9);
            Check.Equal("Many", m, 1L * i + 2L * (i + 1) + 3L * (i + 2) + 4L * (i + 3) + 5L * (i + 4)
                + 6L * (i + 5) + 7L * (i + 6) + 8L * (i + 7) + 9L * (i + 8) + 10L * (i + 9));
            double x = Mixed(i, 0.5 * i, (byte)(i & 0xFF), 2.0f, (long)i << 33, 0.25, (short)-i, 8.0,
                i * 3, 1.5, 7u, 0.125);
            Check.Equal("Mixed", x, i + 0.5 * i + (i & 0xFF) + 2.0 + (double)((long)i << 33) + 0.25 - i + 8.0
                + i * 3 + 1.5 + 7.0 + 0.125);
            double st = Stack(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, i * 1.0, -(i * 1.0));
            Check.Equal("Stack", st, 1 + 2 * 2 + 3 * 3 + 4 * 4 + 5 * 5 + 6 * 6 + 7 * 7 + 8 * 8 + 9 * 9 + 10 * 10 + 0.0);
            total += m;
        }
        long want = 0;
        for (int i = 0; i < N; i++)
        {
            want += 55L * i + 330;
        }
        Check.Equal("args total", total, want);
        return Check.Done("args");
    }

    // Ten integers: six in registers, four on the stack.
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static long Many(long a, long b, long c, long d, long e, long f, long g, long h, long i, long j)
        => a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h + 9 * i + 10 * j;

    // Integers and floating point interleaved.
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static double Mixed(int a, double b, byte c, float d, long e, double f, short g, double h,
        int i, double j, uint k, double l)
        => a + b + c + d + e + f + g + h + i + j + k + l;

    // Twelve doubles: eight in XMM0-7, four on the stack.
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static double Stack(double a, double b, double c, double d, double e, double f, double g,
        double h, double i, double j, double k, double l)
        => a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h + 9 * i + 10 * j + (k + l);
}

public struct Pair { public long A, B; }          // returned in RAX:RDX
public struct Doubles { public double X, Y; }     // returned in XMM0:XMM1
public struct MixedPair { public long A; public double X; }   // RAX, XMM0
public struct Flipped { public double X; public long A; }     // XMM0, RAX
public struct Floats { public float A, B, C, D; }             // XMM0:XMM1 (two floats each)
public struct Large { public long A, B, C, D, E; }            // hidden return buffer

public static class StructsScenario
{
    public const int N = 300;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run()
    {
        for (int i = 0; i < N; i++)
        {
            Pair p = MakePair(i);
            Check.Equal("Pair.A", p.A, i * 3L);
            Check.Equal("Pair.B", p.B, -i * 7L - 1);
            Doubles d = MakeDoubles(i);
            Check.Equal("Doubles.X", d.X, i * 0.5);
            Check.Equal("Doubles.Y", d.Y, i * 0.25 + 1);
            MixedPair m = MakeMixed(i);
            Check.Equal("Mixed.A", m.A, (long)i << 20);
            Check.Equal("Mixed.X", m.X, i * 1.5);
            Flipped f = MakeFlipped(i);
            Check.Equal("Flipped.X", f.X, i * 2.5);
            Check.Equal("Flipped.A", f.A, ~(long)i);
            Floats fl = MakeFloats(i);
            Check.Equal("Floats.A", fl.A, i * 1f);
            Check.Equal("Floats.B", fl.B, i * 2f);
            Check.Equal("Floats.C", fl.C, i * 3f);
            Check.Equal("Floats.D", fl.D, i * 4f);
            Large l = MakeLarge(i);
            Check.Equal("Large", SumLarge(l, p, d), 5L * i + 10 + (i * 3L) + (-i * 7L - 1) + (long)(i * 0.5 + i * 0.25 + 1));
            Check.Equal("Large.E", l.E, i + 4L);
        }
        return Check.Done("structs");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static Pair MakePair(int i) => new Pair { A = i * 3L, B = -i * 7L - 1 };

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static Doubles MakeDoubles(int i) => new Doubles { X = i * 0.5, Y = i * 0.25 + 1 };

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static MixedPair MakeMixed(int i) => new MixedPair { A = (long)i << 20, X = i * 1.5 };

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static Flipped MakeFlipped(int i) => new Flipped { X = i * 2.5, A = ~(long)i };

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static Floats MakeFloats(int i) => new Floats { A = i, B = i * 2f, C = i * 3f, D = i * 4f };

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static Large MakeLarge(int i) => new Large { A = i, B = i + 1L, C = i + 2L, D = i + 3L, E = i + 4L };

    // Structs as arguments: Large by reference to a copy, Pair in two registers, Doubles in two XMM.
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static long SumLarge(Large l, Pair p, Doubles d)
        => l.A + l.B + l.C + l.D + l.E + p.A + p.B + (long)(d.X + d.Y);
}
