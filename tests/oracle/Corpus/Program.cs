// The oracle corpus: `dotnet Corpus.dll <program>` runs one program of the corpus, prints its
// result and returns 0 when the result is the one expected (so a rewriting mistake that changes
// behaviour fails loudly). Every program is deterministic in which methods it calls and how
// often, whatever the thread scheduling: the plain run under eltrace and the instrumented run
// without it must count the same calls.
using System;

namespace Corpus;

public static class Program
{
    public static int Main(string[] args)
    {
        string name = args.Length > 0 ? args[0] : "";
        switch (name)
        {
            case "recursion": return Recursion.Run();
            case "json": return Json.Run();
            case "interp": return Interp.Run();
            case "iterators": return Iterators.Run();
            case "generics": return Generics.Run();
            case "threads": return Threads.Run();
            case "lambdas": return Lambdas.Run();
            case "async": return AsyncProgram.Run();
            case "tailrec": return TailRec.Run();
            case "async-shapes": return AsyncShapes.Run();
            default:
                Console.Error.WriteLine("usage: Corpus <" + string.Join("|", Names) + ">");
                return 2;
        }
    }

    /// The programs, in the order the oracle script runs them.
    public static readonly string[] Names =
        { "recursion", "json", "interp", "iterators", "generics", "threads", "lambdas", "async", "tailrec", "async-shapes" };

    /// Prints `program: result` and returns 0 when it is the expected one, 1 otherwise.
    public static int Expect(string program, string actual, string expected)
    {
        Console.WriteLine($"{program}: {actual}");
        if (actual == expected)
        {
            return 0;
        }
        Console.Error.WriteLine($"{program}: expected {expected}, got {actual}");
        return 1;
    }
}
