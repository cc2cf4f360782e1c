// An explicit tail call (C# cannot emit the `tail.` prefix, so the IL is built with
// Reflection.Emit): Emitted.Caller(x) = tail. call Emitted.Callee(x + 1); Callee(y) = 2 * y.
// Caller(20) is 42; it is called 3 times.
using System;
using System.Reflection;
using System.Reflection.Emit;

namespace Probes
{
    public static class TailProbe
    {
        public const int Calls = 3;

        public static bool Run()
        {
            var ab = AssemblyBuilder.DefineDynamicAssembly(new AssemblyName("ProbesTail"), AssemblyBuilderAccess.Run);
            var mb = ab.DefineDynamicModule("ProbesTail");
            var tb = mb.DefineType("Probes.Emitted", TypeAttributes.Public | TypeAttributes.Abstract | TypeAttributes.Sealed);
            var callee = tb.DefineMethod("Callee", MethodAttributes.Public | MethodAttributes.Static, typeof(int), new[] { typeof(int) });
            var il = callee.GetILGenerator();
            il.Emit(OpCodes.Ldarg_0);
            il.Emit(OpCodes.Ldc_I4_2);
            il.Emit(OpCodes.Mul);
            il.Emit(OpCodes.Ret);
            var caller = tb.DefineMethod("Caller", MethodAttributes.Public | MethodAttributes.Static, typeof(int), new[] { typeof(int) });
            il = caller.GetILGenerator();
            il.Emit(OpCodes.Ldarg_0);
            il.Emit(OpCodes.Ldc_I4_1);
            il.Emit(OpCodes.Add);
            il.Emit(OpCodes.Tailcall);
            il.Emit(OpCodes.Call, callee);
            il.Emit(OpCodes.Ret);
            var type = tb.CreateType();
            var f = type.GetMethod("Caller")!.CreateDelegate<Func<int, int>>();
            bool ok = true;
            for (int i = 0; i < Calls; i++)
            {
                int r = f(20);
                ok &= r == 42;
                Program.Report("tail.result", r);
            }
            return ok;
        }
    }
}
