// Scenario `signals`: a program that waits for signals (crates/cli/tests/e2e/signals.rs sends
// them to `eltrace record`, which passes them on). Handlers registered with
// PosixSignalRegistration; prints "signals: ready" once they are in place, then waits up to
// 120 s. SIGTERM or SIGHUP: prints "signals: got SIGTERM" (or SIGHUP) and returns 100 + the
// signal's number (115, 101). SIGINT: prints "signals: got SIGINT" and waits on (a program
// that finishes its work after a Ctrl-C), so that a second SIGINT to `record` can be tested.
// No signal within 120 s: prints "signals: none" and returns 1.
// Main -> SignalsScenario.Run: 1 call each; Received: 1 call per signal.
using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace Scenarios;

public static class SignalsScenario
{
    private static int s_exit;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run()
    {
        using var done = new ManualResetEventSlim();
        void Handle(PosixSignalContext c, string name, int number, bool stop)
        {
            c.Cancel = true;
            Received(name);
            if (stop)
            {
                Volatile.Write(ref s_exit, 100 + number);
                done.Set();
            }
        }
        using var term = PosixSignalRegistration.Create(PosixSignal.SIGTERM, c => Handle(c, "SIGTERM", 15, true));
        using var hup = PosixSignalRegistration.Create(PosixSignal.SIGHUP, c => Handle(c, "SIGHUP", 1, true));
        using var intr = PosixSignalRegistration.Create(PosixSignal.SIGINT, c => Handle(c, "SIGINT", 2, false));
        Console.WriteLine("signals: ready");
        if (!done.Wait(TimeSpan.FromSeconds(120)))
        {
            Console.WriteLine("signals: none");
            return 1;
        }
        return Volatile.Read(ref s_exit);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Received(string name)
    {
        Console.WriteLine($"signals: got {name}");
    }
}
