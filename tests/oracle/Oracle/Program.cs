// The oracle tool (see ../README.md):
//   Oracle instrument IN_DIR/Corpus.dll OUT_DIR [LIB.dll...]
//                                                   copy the build output, rewrite Corpus.dll's IL so
//                                                   every method body counts its entries, and write
//                                                   the method manifest beside it; each LIB.dll (a
//                                                   third-party assembly) is rewritten into OUT_DIR
//                                                   too, counting through Corpus.dll's runtime half
//   Oracle compare ORACLE.tsv REPORT.json [MODULE]  compare the instrumented run's counts with
//                                                   `eltrace report --json` (exit 1 on a mismatch)
using System;

namespace Oracle;

public static class Program
{
    public static int Main(string[] args)
    {
        try
        {
            if (args.Length >= 3 && args[0] == "instrument")
            {
                return Instrument.Run(args[1], args[2], args[3..]);
            }
            if ((args.Length == 3 || args.Length == 4) && args[0] == "compare")
            {
                return Compare.Run(args[1], args[2], args.Length == 4 ? args[3] : "Corpus.dll");
            }
        }
        catch (Exception e) when (e is System.IO.IOException or InvalidOperationException or FormatException
            or System.Collections.Generic.KeyNotFoundException or System.Text.Json.JsonException or BadImageFormatException)
        {
            Console.Error.WriteLine($"oracle: {e.Message}");
            return 2;
        }
        Console.Error.WriteLine(
            "usage: Oracle instrument IN_DIR/App.dll OUT_DIR [LIB.dll...]\n" +
            "       Oracle compare ORACLE.tsv REPORT.json [MODULE]");
        return 2;
    }
}
