// Program `generics`: generic types (a binary heap, an immutable list, a pair, a box with a static
// cache per instantiation), generic methods (with constraints, explicit and inferred type
// arguments, over value and reference types, whose code the JIT shares for reference types and
// specializes per value type), a generic interface with a default method, a generic virtual
// method, nested generic types, and user-defined operators and conversions.
using System;
using System.Collections.Generic;

namespace Corpus;

public static class Generics
{
    public static int Run()
    {
        var heap = new Heap<int>(Comparer<int>.Default);
        foreach (int x in new[] { 42, 7, 19, 3, 88, 61, 7, 24, 55, 10, 1, 99, 33 })
        {
            heap.Push(x);
        }
        var sorted = new List<int>();
        while (heap.Count > 0)
        {
            sorted.Add(heap.Pop());
        }
        var words = new Heap<string>(StringComparer.Ordinal);
        foreach (string w in "the quick brown fox jumps over the lazy dog".Split(' '))
        {
            words.Push(w);
        }
        string firstWord = words.Pop();

        ImmutableList<int> list = ImmutableList<int>.Empty;
        for (int i = 1; i <= 20; i++)
        {
            list = list.Prepend(i);
        }
        ImmutableList<string> strings = list.Map(i => "n" + i).Filter(s => s.Length == 2);
        long folded = list.Fold(0L, (acc, i) => acc + i * i);

        var pairs = new List<Pair<string, Vec2>>();
        for (int i = 0; i < 5; i++)
        {
            pairs.Add(Pair.Of("p" + i, new Vec2(i, -i) * 2 + Vec2.UnitX));
        }
        Vec2 sum = Sum(pairs.ConvertAll(p => p.Second));
        Pair<Vec2, string> swapped = pairs[3].Swap();

        int maxInt = Max(3, 9, 4);
        string maxStr = Max("pear", "apple", "plum");
        Vec2 maxVec = Max(new Vec2(1, 1), new Vec2(0, 5), new Vec2(2, 0));
        int cached = Box<int>.Describe().Length + Box<string>.Describe().Length + Box<Vec2>.Describe().Length
            + Box<int>.Describe().Length;

        IShape[] shapes = { new Square(3), new Circle(2), new Square(1.5) };
        double area = 0;
        foreach (IShape s in shapes)
        {
            area += s.Area() + s.Scaled(2);
        }
        var visitor = new CountingVisitor();
        foreach (IShape s in shapes)
        {
            s.Accept(visitor, 1);
            s.Accept(visitor, "x");
        }
        var nested = new Outer<int>.Inner<string>(7, "seven");
        Meters m = 12.5;
        double back = (double)(m + (Meters)7.5);

        string result = $"{string.Join(",", sorted)} {firstWord} {strings.Count} {folded} {sum} {swapped.First} " +
            $"{maxInt} {maxStr} {maxVec} {cached} {area:F3} {visitor.Visits} {nested.Describe()} {back}";
        return Program.Expect("generics", result, "1,3,7,7,10,19,24,33,42,55,61,88,99 brown 9 2870 (25;-20) (7;-6) 9 plum (0;5) 40 119.582 33 7/seven 20");
    }

    public static T Max<T>(params T[] items) where T : IComparable<T>
    {
        T best = items[0];
        foreach (T item in items)
        {
            if (item.CompareTo(best) > 0)
            {
                best = item;
            }
        }
        return best;
    }

    public static Vec2 Sum(List<Vec2> vs)
    {
        Vec2 total = default;
        foreach (Vec2 v in vs)
        {
            total += v;
        }
        return total;
    }
}

/// A binary min-heap over an array that grows.
public sealed class Heap<T>
{
    private readonly IComparer<T> comparer;
    private T[] items = new T[4];

    public Heap(IComparer<T> comparer) => this.comparer = comparer;

    public int Count { get; private set; }

    public void Push(T item)
    {
        if (Count == items.Length)
        {
            Array.Resize(ref items, Count * 2);
        }
        items[Count] = item;
        SiftUp(Count++);
    }

    public T Pop()
    {
        T top = items[0];
        items[0] = items[--Count];
        SiftDown(0);
        return top;
    }

    private void SiftUp(int i)
    {
        while (i > 0 && Less(i, (i - 1) / 2))
        {
            Swap(i, (i - 1) / 2);
            i = (i - 1) / 2;
        }
    }

    private void SiftDown(int i)
    {
        while (true)
        {
            int smallest = i, l = 2 * i + 1, r = l + 1;
            if (l < Count && Less(l, smallest))
            {
                smallest = l;
            }
            if (r < Count && Less(r, smallest))
            {
                smallest = r;
            }
            if (smallest == i)
            {
                return;
            }
            Swap(i, smallest);
            i = smallest;
        }
    }

    private bool Less(int a, int b) => comparer.Compare(items[a], items[b]) < 0;

    private void Swap(int a, int b) => (items[a], items[b]) = (items[b], items[a]);
}

/// A persistent singly linked list.
public sealed class ImmutableList<T>
{
    public static readonly ImmutableList<T> Empty = new(default!, null, 0);

    private readonly T head;
    private readonly ImmutableList<T>? tail;

    private ImmutableList(T head, ImmutableList<T>? tail, int count) => (this.head, this.tail, Count) = (head, tail, count);

    public int Count { get; }

    public ImmutableList<T> Prepend(T item) => new(item, this, Count + 1);

    public ImmutableList<TOut> Map<TOut>(Func<T, TOut> f) =>
        Count == 0 ? ImmutableList<TOut>.Empty : tail!.Map(f).Prepend(f(head));

    public ImmutableList<T> Filter(Predicate<T> keep)
    {
        if (Count == 0)
        {
            return this;
        }
        ImmutableList<T> rest = tail!.Filter(keep);
        return keep(head) ? rest.Prepend(head) : rest;
    }

    public TAcc Fold<TAcc>(TAcc seed, Func<TAcc, T, TAcc> f)
    {
        TAcc acc = seed;
        for (ImmutableList<T> l = this; l.Count > 0; l = l.tail!)
        {
            acc = f(acc, l.head);
        }
        return acc;
    }
}

public readonly record struct Pair<TFirst, TSecond>(TFirst First, TSecond Second)
{
    public Pair<TSecond, TFirst> Swap() => new(Second, First);
}

public static class Pair
{
    public static Pair<A, B> Of<A, B>(A a, B b) => new(a, b);
}

public readonly struct Vec2 : IComparable<Vec2>
{
    public static readonly Vec2 UnitX = new(1, 0);

    public Vec2(double x, double y) => (X, Y) = (x, y);

    public double X { get; }

    public double Y { get; }

    public double Length => Math.Sqrt(X * X + Y * Y);

    public static Vec2 operator +(Vec2 a, Vec2 b) => new(a.X + b.X, a.Y + b.Y);

    public static Vec2 operator *(Vec2 a, double k) => new(a.X * k, a.Y * k);

    public int CompareTo(Vec2 other) => Length.CompareTo(other.Length);

    public override string ToString() => $"({X};{Y})";
}

/// A static field per instantiation, set by the type's static constructor.
public static class Box<T>
{
    private static readonly string Name;

    static Box() => Name = "Box<" + typeof(T).Name + ">";

    public static string Describe() => Name;
}

public interface IVisitor
{
    void Visit<T>(IShape shape, T tag);
}

public sealed class CountingVisitor : IVisitor
{
    public int Visits { get; private set; }

    public void Visit<T>(IShape shape, T tag) => Visits += tag is string ? 10 : 1;
}

public interface IShape
{
    double Area();

    /// A default interface method.
    double Scaled(double k) => Area() * k * k;

    /// A generic virtual method.
    void Accept<T>(IVisitor v, T tag) => v.Visit(this, tag);
}

public sealed class Square : IShape
{
    private readonly double side;

    public Square(double side) => this.side = side;

    public double Area() => side * side;
}

public sealed class Circle : IShape
{
    private readonly double r;

    public Circle(double r) => this.r = r;

    public double Area() => Math.Round(Math.PI * r * r, 6);

    public double Scaled(double k) => Area() * k * k + 0.5;
}

public static class Outer<T>
{
    public sealed class Inner<U>
    {
        private readonly T t;
        private readonly U u;

        public Inner(T t, U u) => (this.t, this.u) = (t, u);

        public string Describe() => $"{t}/{u}";
    }
}

public readonly struct Meters
{
    private readonly double value;

    private Meters(double value) => this.value = value;

    public static implicit operator Meters(double v) => new(v);

    public static explicit operator double(Meters m) => m.value;

    public static Meters operator +(Meters a, Meters b) => new(a.value + b.value);
}
