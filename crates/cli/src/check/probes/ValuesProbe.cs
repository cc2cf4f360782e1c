// Synchronous methods whose arguments and return values `eltrace record --values` decodes:
// Mix(int, double, string, object) on an instance (so `this` is captured too), called once
// with known values; Mix returns the string's length plus the int.
using System.Runtime.CompilerServices;

namespace Probes
{
    public sealed class ValuesProbe
    {
        public sealed class Payload
        {
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public long Mix(int count, double ratio, string label, object payload)
        {
            return label.Length + count + (payload is Payload ? 1 : 0) + (ratio > 0 ? 1 : 0);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static double Half(double x) => x / 2;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static string Echo(string? s, char c, bool flag) => (s ?? "") + c + (flag ? "!" : "?");

        public static bool Run()
        {
            var probe = new ValuesProbe();
            long mixed = probe.Mix(7, 2.5, "hi \"there\"", new Payload());
            double half = Half(5.0);
            string echo = Echo(null, 'x', true);
            Program.Report("values.mix", mixed);
            Program.Report("values.half", half);
            Program.Report("values.echo", echo);
            return mixed == 7 + 10 + 1 + 1 && half == 2.5 && echo == "x!";
        }
    }
}
