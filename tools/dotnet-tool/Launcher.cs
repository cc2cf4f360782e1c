// The `eltrace` dotnet tool (scripts/pack-tool.sh packs it): a launcher that replaces itself
// (execv) with the native eltrace binary shipped in the package's native/ folder, beside the
// profiler library it loads into the programs it records. exec, not a child process: the
// exit status, signals (Ctrl-C, SIGTERM) and the terminal are eltrace's own, as if it had
// been started directly. A launcher, because a dotnet tool's entry point is a .NET assembly;
// the native binary needs no .NET to run.
using System;
using System.IO;
using System.Runtime.InteropServices;

internal static class Launcher
{
    [DllImport("libc", SetLastError = true)]
    private static extern int execv(string path, string?[] argv);

    private static int Main(string[] args)
    {
        if (!OperatingSystem.IsLinux() || RuntimeInformation.OSArchitecture != Architecture.X64)
        {
            Console.Error.WriteLine($"eltrace: error: this package runs on Linux x64 only (this is {RuntimeInformation.OSDescription}, {RuntimeInformation.OSArchitecture})");
            return 1;
        }
        string native = Path.Combine(AppContext.BaseDirectory, "native");
        string exe = Path.Combine(native, "eltrace");
        foreach (string file in new[] { exe, Path.Combine(native, "libeltrace_profiler.so") })
        {
            if (!File.Exists(file))
            {
                Console.Error.WriteLine($"eltrace: error: the tool package is incomplete: {file} is missing (reinstall it, or build it with scripts/pack-tool.sh)");
                return 1;
            }
        }
        // NuGet does not keep the executable bit of the files it extracts.
        UnixFileMode mode = File.GetUnixFileMode(exe);
        const UnixFileMode exec = UnixFileMode.UserExecute | UnixFileMode.GroupExecute | UnixFileMode.OtherExecute;
        if ((mode & UnixFileMode.UserExecute) == 0)
        {
            try
            {
                File.SetUnixFileMode(exe, mode | exec);
            }
            catch (Exception e)
            {
                Console.Error.WriteLine($"eltrace: error: cannot make {exe} executable: {e.Message}");
                return 1;
            }
        }
        var argv = new string?[args.Length + 2];
        argv[0] = exe;
        Array.Copy(args, 0, argv, 1, args.Length);
        argv[^1] = null;
        execv(exe, argv);
        Console.Error.WriteLine($"eltrace: error: cannot run {exe}: errno {Marshal.GetLastPInvokeError()}");
        return 1;
    }
}
