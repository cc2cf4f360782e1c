// HelloTrace: a small program whose profile reads well. It counts primes with trial division
// on a second thread while the main thread counts words in a text and walks a binary tree,
// then prints what it found. Record it with eltrace:
//
//   eltrace record -o hello.eltrace -- dotnet bin/Release/net10.0/HelloTrace.dll
//   eltrace report hello.eltrace
//
// The report shows Primes.IsPrime as the hot spot of the "primes" thread, WordCount.Count and
// its helpers on the main thread, and Tree.Sum's recursion.
using System;
using System.Collections.Generic;
using System.Threading;

namespace HelloTrace;

public static class Program
{
    public static int Main()
    {
        var primeThread = new Thread(Primes.Run) { Name = "primes" };
        primeThread.Start();

        var words = WordCount.Count(Text.Sample);
        var tree = Tree.Build(depth: 12);
        long sum = Tree.Sum(tree);

        primeThread.Join();

        Console.WriteLine($"primes below {Primes.Limit}: {Primes.Found}");
        Console.WriteLine($"distinct words: {words.Count}; most frequent:");
        foreach (var (word, count) in WordCount.Top(words, 3))
        {
            Console.WriteLine($"  {word,-8} {count}");
        }
        Console.WriteLine($"tree of depth 12: {Tree.Count(tree)} nodes, sum {sum}");
        return 0;
    }
}

public static class Primes
{
    public const int Limit = 20_000;
    public static int Found;

    public static void Run()
    {
        Found = CountBelow(Limit);
    }

    public static int CountBelow(int limit)
    {
        int count = 0;
        for (int n = 2; n < limit; n++)
        {
            if (IsPrime(n))
            {
                count++;
            }
        }
        return count;
    }

    public static bool IsPrime(int n)
    {
        for (int d = 2; d * d <= n; d++)
        {
            if (n % d == 0)
            {
                return false;
            }
        }
        return true;
    }
}

public static class WordCount
{
    private static readonly char[] Separators = { ' ', '\n', '\r', '\t' };

    public static Dictionary<string, int> Count(string text)
    {
        var counts = new Dictionary<string, int>();
        foreach (var raw in text.Split(Separators, StringSplitOptions.RemoveEmptyEntries))
        {
            string word = Normalize(raw);
            if (word.Length == 0)
            {
                continue;
            }
            counts[word] = counts.TryGetValue(word, out int c) ? c + 1 : 1;
        }
        return counts;
    }

    public static string Normalize(string raw)
    {
        var chars = new List<char>(raw.Length);
        foreach (char ch in raw)
        {
            if (char.IsLetter(ch))
            {
                chars.Add(char.ToLowerInvariant(ch));
            }
        }
        return new string(chars.ToArray());
    }

    public static List<(string Word, int Count)> Top(Dictionary<string, int> counts, int n)
    {
        var list = new List<(string Word, int Count)>();
        foreach (var pair in counts)
        {
            list.Add((pair.Key, pair.Value));
        }
        list.Sort(ByCountThenWord);
        return list.GetRange(0, Math.Min(n, list.Count));
    }

    private static int ByCountThenWord((string Word, int Count) a, (string Word, int Count) b)
    {
        return b.Count != a.Count ? b.Count.CompareTo(a.Count) : string.CompareOrdinal(a.Word, b.Word);
    }
}

public sealed class Node
{
    public Node? Left;
    public Node? Right;
    public int Value;
}

public static class Tree
{
    public static Node Build(int depth, int value = 1)
    {
        var node = new Node { Value = value };
        if (depth > 1)
        {
            node.Left = Build(depth - 1, 2 * value);
            node.Right = Build(depth - 1, 2 * value + 1);
        }
        return node;
    }

    public static long Sum(Node? node)
    {
        if (node is null)
        {
            return 0;
        }
        return node.Value + Sum(node.Left) + Sum(node.Right);
    }

    public static int Count(Node? node)
    {
        return node is null ? 0 : 1 + Count(node.Left) + Count(node.Right);
    }
}

public static class Text
{
    public const string Sample = @"
The quick brown fox jumps over the lazy dog. The dog sleeps; the fox runs on.
A profiler tells you where the time goes, not where you think it goes.
Measure first, then change the code, then measure again: the numbers decide.
The fox, the dog and the profiler all agree that the hot path is the one that runs most.
";
}
