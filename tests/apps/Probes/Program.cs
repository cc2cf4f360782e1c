// The probe program of `eltrace check`: `Probes MODE`. Every mode checks its own results and
// prints them as `probe KEY VALUE` lines; the exit code is 0 when every result is right, 3
// when one is wrong (a register the profiler damaged shows up here), 2 for a bad mode.
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
                case "async": ok = AsyncProbe.Run(); break;
                case "info": ok = AsyncProbe.Run() & TailProbe.Run(); break;
                case "regs": ok = RegsProbe.Run(); break;
                case "snapshot": ok = SnapshotProbe.Run(); break;
                case "flags": ok = RegsProbe.Run(); break;
                case "pinvoke": ok = PInvokeProbe.Run(); break;
                case "values": ok = ValuesProbe.Run(); break;
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
