// The library corpus: `dotnet CorpusLibs.dll <program>` runs one program, prints its result and
// returns 0 when it is the expected one. As in the corpus, every program calls the same methods
// the same number of times in every run, whatever the thread scheduling (the plain run under
// eltrace and the instrumented run without it must count the same calls).
using System;

namespace CorpusLibs;

public static class Program
{
    public static int Main(string[] args)
    {
        string name = args.Length > 0 ? args[0] : "";
        switch (name)
        {
            case "pipes": return Pipes.Run();
            case "async-linq": return AsyncLinq.Run();
            default:
                Console.Error.WriteLine("usage: CorpusLibs <" + string.Join("|", Names) + ">");
                return 2;
        }
    }

    /// The programs, in the order the oracle script runs them.
    public static readonly string[] Names = { "pipes", "async-linq" };

    /// Prints `program: result` and returns 0 when it is the expected one, 1 otherwise.
    public static int Expect(string program, string actual, string expected)
    {
        Console.WriteLine($"{program}: {actual}");
        if (actual == expected)
        {
            return 0;
        }
        Console.Error.WriteLine($"{program}: expected {expected}");
        return 1;
    }
}
