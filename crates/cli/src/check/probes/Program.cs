// The probe program of `eltrace check`: `Probes MODE`. Every mode checks its own results and
// prints them as `probe KEY VALUE` lines; the exit code is 0 when every result is right, 3
// when one is wrong (a register the profiler damaged shows up here), 2 for a bad mode. Built
// for net8.0 (for .NET 8 and 9) it has no runtime-async probes (RuntimeAsync/): `async` exits
// 4 and prints `probe runtime-async 0`, `info` runs the tail-call probe alone.
using System;

namespace Probes
{
    public static class Program
    {
        public static int Main(string[] args)
        {
            string mode = args.Length > 0 ? args[0] : "";
            bool ok;
            switch (mode)
            {
#if RUNTIME_ASYNC
                case "async": ok = AsyncProbe.Run(); break;
                case "info": ok = AsyncProbe.Run() & TailProbe.Run(); break;
#else
                case "async":
                    Report("runtime-async", 0);
                    return 4;
                case "info":
                    Report("runtime-async", 0);
                    ok = TailProbe.Run();
                    break;
#endif
                case "regs": ok = RegsProbe.Run(); break;
                case "snapshot": ok = SnapshotProbe.Run(); break;
                case "flags": ok = RegsProbe.Run(); break;
                case "pinvoke": ok = PInvokeProbe.Run(); break;
                case "values": ok = ValuesProbe.Run(); break;
                case "jit": ok = JitProbe.Run(); break;
                default:
                    Console.Error.WriteLine($"unknown mode '{mode}'");
                    return 2;
            }
            Console.WriteLine($"probe ok {(ok ? 1 : 0)}");
            Console.Out.Flush();
            return ok ? 0 : 3;
        }

        public static void Report(string key, object value) =>
            Console.WriteLine(FormattableString.Invariant($"probe {key} {value}"));
    }
}
