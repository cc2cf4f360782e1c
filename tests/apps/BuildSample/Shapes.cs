// Some ordinary C# for the compiler to bind and emit: records, an interface, pattern
// matching, generics and LINQ.
using System;
using System.Collections.Generic;
using System.Linq;

namespace BuildSample;

public interface IShape
{
    double Area { get; }
}

public sealed record Circle(double Radius) : IShape
{
    public double Area => Math.PI * Radius * Radius;
}

public sealed record Rectangle(double Width, double Height) : IShape
{
    public double Area => Width * Height;
}

public static class Shapes
{
    public static string Describe(IShape shape) => shape switch
    {
        Circle { Radius: 0 } => "a point",
        Circle c => $"a circle of radius {c.Radius}",
        Rectangle { Width: var w, Height: var h } when w == h => $"a square of side {w}",
        Rectangle r => $"a {r.Width} by {r.Height} rectangle",
        _ => "something else",
    };

    public static double TotalArea(IEnumerable<IShape> shapes) => shapes.Sum(s => s.Area);

    public static IReadOnlyDictionary<string, int> CountByKind(IEnumerable<IShape> shapes) =>
        shapes.GroupBy(s => s.GetType().Name).ToDictionary(g => g.Key, g => g.Count());
}
