// Scenario `calltree`: a call tree of known counts across several kinds of method.
//
//   CallTreeScenario.Run                       1   (static)
//     Alpha.Step             from Run         10   (static, loop i = 0..9)
//       Beta.Twice           from Step        20   (instance, 2 per Step)
//         Point.LengthSquared from Twice      20   (struct instance method, 1 per Twice)
//       Outer+Inner.Leaf     from Step        10   (static method of a nested class)
//     Outer+Inner.Leaf       from Run          7   (loop j = 0..6)  => Leaf 17 in all
//     Box`1.Describe         from Run          5   (generic: 3 on Box<int>, 2 on Box<string>)
//
// Printed total: Steps 2*(285+90) + 2*(385+90) + 9 = 1709, Leaf(0..6) 6, Describe 3*1 + 2*3 = 9:
// "calltree total = 1724".
using System;
using System.Runtime.CompilerServices;

namespace Scenarios;

public static class CallTreeScenario
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run()
    {
        var beta = new Beta(3);
        long total = 0;
        for (int i = 0; i < 10; i++)
        {
            total += Alpha.Step(beta, i);
        }
        for (int j = 0; j < 7; j++)
        {
            total += Outer.Inner.Leaf(j);
        }
        var intBox = new Box<int>(5);
        var stringBox = new Box<string>("abc");
        for (int k = 0; k < 3; k++)
        {
            total += intBox.Describe();
        }
        for (int k = 0; k < 2; k++)
        {
            total += stringBox.Describe();
        }
        Console.WriteLine($"calltree total = {total}");
        return 0;
    }
}

public static class Alpha
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Step(Beta beta, int i)
    {
        int s = beta.Twice(i) + beta.Twice(i + 1);
        s += Outer.Inner.Leaf(i);
        return s;
    }
}

public sealed class Beta
{
    private readonly int _factor;

    public Beta(int factor)
    {
        _factor = factor;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public int Twice(int x)
    {
        var p = new Point(x, _factor);
        int l = p.LengthSquared();
        return l * 2;
    }
}

public readonly struct Point
{
    public readonly int X;
    public readonly int Y;

    public Point(int x, int y)
    {
        X = x;
        Y = y;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public int LengthSquared()
    {
        return X * X + Y * Y;
    }
}

public sealed class Box<T>
{
    private readonly T _value;

    public Box(T value)
    {
        _value = value;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public int Describe()
    {
        string text = _value?.ToString() ?? "";
        return text.Length;
    }
}

public static class Outer
{
    public static class Inner
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Leaf(int x)
        {
            return x % 3;
        }
    }
}
