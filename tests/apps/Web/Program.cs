// Web: a minimal API on 127.0.0.1 for recording a real server under load.
//
//   dotnet Web.dll [--port N]      (N = 0, the default: the OS picks a free port)
//
// stdout (one line each, flushed, nothing else on stdout):
//   listening=http://127.0.0.1:PORT   once Kestrel accepts connections
//   stopped hello=H fib=F shutdown=S  after a graceful shutdown: how often each handler ran,
//                                     counted by the app itself
//
// It stops gracefully (the host's shutdown, so the runtime exits normally and a profiler sees
// its Shutdown) on POST /shutdown, on SIGTERM or SIGINT (the host's console lifetime), or when
// stdin reaches end of file if started with --exit-on-stdin-close.
using System;
using System.Linq;
using System.Threading.Tasks;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace WebApp;

public static class Program
{
    public static async Task<int> Main(string[] args)
    {
        int port = 0;
        bool exitOnStdinClose = false;
        for (int i = 0; i < args.Length; i++)
        {
            switch (args[i])
            {
                case "--port" when i + 1 < args.Length && int.TryParse(args[i + 1], out port):
                    i++;
                    break;
                case "--exit-on-stdin-close":
                    exitOnStdinClose = true;
                    break;
                default:
                    Console.Error.WriteLine("usage: Web [--port N] [--exit-on-stdin-close]");
                    return 2;
            }
        }

        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder(new WebApplicationOptions
        {
            Args = Array.Empty<string>(),
        });
        // Nothing but the two lines above on stdout; no per-request logging cost.
        builder.Logging.ClearProviders();
        builder.WebHost.UseUrls($"http://127.0.0.1:{port}");

        WebApplication app = builder.Build();
        Endpoints.Map(app);

        await app.StartAsync();
        // After start, the addresses Kestrel actually bound (port 0 replaced by the real one).
        string address = app.Urls.First();
        Console.Out.WriteLine($"listening={address}");
        Console.Out.Flush();

        if (exitOnStdinClose)
        {
            IHostApplicationLifetime lifetime = app.Lifetime;
            _ = Task.Run(() =>
            {
                while (Console.In.ReadLine() is not null)
                {
                }
                lifetime.StopApplication();
            });
        }

        await app.WaitForShutdownAsync();
        Console.Out.WriteLine(
            $"stopped hello={Endpoints.HelloCount} fib={Endpoints.FibCount} shutdown={Endpoints.ShutdownCount}");
        Console.Out.Flush();
        return 0;
    }
}
