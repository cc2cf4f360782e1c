// `Oracle instrument`: copies a build output folder and rewrites its main assembly so that every
// method body starts with `OracleRuntime.Counts.Hit(id)`, one id per method. Writes the manifest
// `<App>.oracle.tsv` beside it, which the runtime half (Corpus/OracleRuntime.cs) reads at exit:
//
//   # id  name                              kind      calls_from
//   12    Corpus.Recursion.Partition        method    12
//   40    Corpus.Async+<Leaf>d__4.MoveNext  async     39
//
// `calls_from` is the method whose entries count this method's calls: itself, except for the
// MoveNext of an async state machine, whose logical calls are its kickoff method's entries. An
// async iterator's members (its body's MoveNext, MoveNextAsync, DisposeAsync, ...) count their
// own entries, as ordinary methods (kind `async-iterator` on the body's MoveNext).
// An iterator's MoveNext also tells the runtime half which enumerator (`this`) it moves, at its
// start (`Counts.Enter(this, id)`) and with its result before each return
// (`Counts.Return(result, this, id)`): the enumerations, yields and how they ended.
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text;
using Mono.Cecil;
using Mono.Cecil.Cil;
using Mono.Cecil.Rocks;

namespace Oracle;

public static class Instrument
{
    /// The runtime half; its namespace is never instrumented.
    const string RuntimeNamespace = "OracleRuntime";
    const string RuntimeType = "OracleRuntime.Counts";
    const string HitMethod = "Hit";

    const string AsyncAttr = "System.Runtime.CompilerServices.AsyncStateMachineAttribute";
    const string IteratorAttr = "System.Runtime.CompilerServices.IteratorStateMachineAttribute";
    const string AsyncIteratorAttr = "System.Runtime.CompilerServices.AsyncIteratorStateMachineAttribute";

    /// Instruments `inputDll` (which holds the runtime half) into `outDir`, and each of `libs`
    /// (third-party assemblies: copied into `outDir`, replacing the build output's copy) with
    /// ids after the app's, calling the app's runtime half.
    public static int Run(string inputDll, string outDir, string[] libs)
    {
        string inDir = Path.GetDirectoryName(Path.GetFullPath(inputDll))!;
        Directory.CreateDirectory(outDir);
        foreach (string file in Directory.GetFiles(inDir))
        {
            File.Copy(file, Path.Combine(outDir, Path.GetFileName(file)), overwrite: true);
        }
        string outDll = Path.Combine(outDir, Path.GetFileName(inputDll));

        var resolver = new DefaultAssemblyResolver();
        resolver.AddSearchDirectory(inDir);
        resolver.AddSearchDirectory(Path.GetDirectoryName(typeof(object).Assembly.Location)!);
        var parameters = new ReaderParameters { ReadingMode = ReadingMode.Immediate, InMemory = true, AssemblyResolver = resolver };
        using ModuleDefinition module = ModuleDefinition.ReadModule(inputDll, parameters);

        TypeDefinition runtime = module.GetType(RuntimeType)
            ?? throw new InvalidOperationException($"{inputDll} has no {RuntimeType}");
        MethodDefinition Runtime(string name) => runtime.Methods.FirstOrDefault(m => m.Name == name)
            ?? throw new InvalidOperationException($"{inputDll} has no {RuntimeType}.{name}");
        MethodDefinition hit = Runtime(HitMethod);
        MethodDefinition enter = Runtime("Enter");
        MethodDefinition ret = Runtime("Return");

        var manifest = new StringBuilder("# id\tname\tkind\tcalls_from\n");
        int count = Rewrite(module, 0, manifest, hit, enter, ret);
        module.Write(outDll);
        Console.Error.WriteLine($"oracle: instrumented {count} methods of {Path.GetFileName(inputDll)} into {outDll}");

        foreach (string lib in libs)
        {
            var libResolver = new DefaultAssemblyResolver();
            libResolver.AddSearchDirectory(outDir);
            libResolver.AddSearchDirectory(Path.GetDirectoryName(typeof(object).Assembly.Location)!);
            var libParameters = new ReaderParameters { ReadingMode = ReadingMode.Immediate, InMemory = true, AssemblyResolver = libResolver };
            using ModuleDefinition libModule = ModuleDefinition.ReadModule(lib, libParameters);
            int n = Rewrite(libModule, count, manifest,
                libModule.ImportReference(hit), libModule.ImportReference(enter), libModule.ImportReference(ret));
            string libOut = Path.Combine(outDir, Path.GetFileName(lib));
            libModule.Write(libOut);
            Console.Error.WriteLine($"oracle: instrumented {n} methods of {lib} into {libOut}");
            count += n;
        }

        string manifestPath = Path.ChangeExtension(outDll, ".oracle.tsv");
        File.WriteAllText(manifestPath, manifest.ToString());
        return 0;
    }

    /// Inserts the counters into every method of `module` with a body outside the runtime half,
    /// in metadata order, with ids from `firstId`; appends their manifest lines; returns how
    /// many.
    static int Rewrite(ModuleDefinition module, int firstId, StringBuilder manifest,
        MethodReference hit, MethodReference enter, MethodReference ret)
    {
        var methods = new List<MethodDefinition>();
        foreach (TypeDefinition t in module.GetTypes())
        {
            if (t.Name == "<Module>" || Names.OuterNamespace(t) == RuntimeNamespace)
            {
                continue;
            }
            methods.AddRange(t.Methods.Where(m => m.HasBody));
        }
        var ids = new Dictionary<MethodDefinition, int>();
        for (int i = 0; i < methods.Count; i++)
        {
            ids[methods[i]] = firstId + i;
        }

        var roles = StateMachines(methods);
        foreach (MethodDefinition m in methods)
        {
            int id = ids[m];
            (string kind, int from) = roles.TryGetValue(m, out var r)
                ? (r.Kind, r.Kind == "async" ? ids[r.Kickoff] : id)
                : ("method", id);
            manifest.Append($"{id}\t{Names.Full(m)}\t{kind}\t{from}\n");

            ILProcessor il = m.Body.GetILProcessor();
            Instruction first = m.Body.Instructions[0];
            // Inserted before the first instruction: branches to it (a loop at the top of the
            // method) and a try block starting there keep their target, so the counter runs once
            // per entry and outside any handler.
            il.InsertBefore(first, il.Create(OpCodes.Ldc_I4, id));
            il.InsertBefore(first, il.Create(OpCodes.Call, hit));
            if (kind == "iterator")
            {
                CountEnumerator(m, id, first, enter, ret);
            }
        }

        return methods.Count;
    }

    /// An iterator's MoveNext: `Counts.Enter(this, id)` after the entry counter, and every
    /// `ret` (a bool on the stack) becomes `dup; ldarg.0; ldc.i4 id; call Counts.Return; ret`,
    /// in place, so that branches to the `ret` reach the counter (a `ret` is never inside a
    /// protected block). Short branches are widened first: the body grows in the middle.
    static void CountEnumerator(MethodDefinition m, int id, Instruction first, MethodReference enter, MethodReference ret)
    {
        m.Body.SimplifyMacros();
        ILProcessor il = m.Body.GetILProcessor();
        il.InsertBefore(first, il.Create(OpCodes.Ldarg_0));
        il.InsertBefore(first, il.Create(OpCodes.Ldc_I4, id));
        il.InsertBefore(first, il.Create(OpCodes.Call, enter));
        foreach (Instruction r in m.Body.Instructions.Where(i => i.OpCode == OpCodes.Ret).ToList())
        {
            r.OpCode = OpCodes.Dup;
            r.Operand = null;
            il.InsertAfter(r, il.Create(OpCodes.Ret));
            il.InsertAfter(r, il.Create(OpCodes.Call, ret));
            il.InsertAfter(r, il.Create(OpCodes.Ldc_I4, id));
            il.InsertAfter(r, il.Create(OpCodes.Ldarg_0));
        }
        m.Body.OptimizeMacros();
    }

    /// The MoveNext methods of compiler state machines, found through the attribute the compiler
    /// puts on each kickoff method: `async` (AsyncStateMachine), `iterator` (IteratorStateMachine)
    /// or `async-iterator` (AsyncIteratorStateMachine: its body, counted as an ordinary method).
    static Dictionary<MethodDefinition, (string Kind, MethodDefinition Kickoff)> StateMachines(
        List<MethodDefinition> methods)
    {
        var roles = new Dictionary<MethodDefinition, (string, MethodDefinition)>();
        foreach (MethodDefinition kickoff in methods)
        {
            foreach (CustomAttribute a in kickoff.CustomAttributes)
            {
                string kind = a.AttributeType.FullName switch
                {
                    AsyncAttr => "async",
                    IteratorAttr => "iterator",
                    AsyncIteratorAttr => "async-iterator",
                    _ => "",
                };
                if (kind.Length == 0)
                {
                    continue;
                }
                var smType = ((TypeReference)a.ConstructorArguments[0].Value).Resolve()
                    ?? throw new InvalidOperationException($"state machine of {Names.Full(kickoff)} not found");
                MethodDefinition moveNext = smType.Methods.Single(m => m.Name == "MoveNext");
                roles[moveNext] = (kind, kickoff);
            }
        }
        return roles;
    }
}
