// Program `interp`: a small expression language run two ways. A lexer and a Pratt parser build
// an AST; a tree-walking interpreter evaluates it with nested environments and first-class
// closures (a recursive fib, a higher-order fold); the function-free part of the language also
// compiles to bytecode for a stack VM, whose results must agree with the tree walker's.
//
//   program := expr (';' expr)*
//   expr    := 'let' name '=' expr | 'fn' '(' names ')' expr | 'if' expr 'then' expr 'else' expr
//            | 'while' expr 'do' expr | '{' program '}' | name '=' expr | binary/unary/call
using System;
using System.Collections.Generic;

namespace Corpus;

public static class Interp
{
    private const string Source = @"
        let fib = fn(n) if n < 2 then n else fib(n - 1) + fib(n - 2);
        let fold = fn(f, acc, lo, hi) { let i = lo; while i < hi do { acc = f(acc, i); i = i + 1 }; acc };
        let square = fn(x) x * x;
        let total = fold(fn(a, i) a + square(i) % 7, 0, 0, 120);
        fib(12) * 1000 + total";

    private static readonly string[] Arithmetic =
    {
        "1 + 2 * 3 - 4 / 2",
        "-(3 + 4) * (2 - 5) % 11",
        "if 3 < 4 then 10 * 10 else 0 - 1",
        "{ let a = 6; let b = 7; a * b + (a - b) * (a + b) }",
        "{ let n = 0; let s = 0; while n < 25 do { s = s + n * n; n = n + 1 }; s }",
    };

    public static int Run()
    {
        long result = new Evaluator().Run(Parser.ParseProgram(Source));
        long vmSum = 0;
        foreach (string src in Arithmetic)
        {
            Node ast = Parser.ParseProgram(src);
            long walked = new Evaluator().Run(ast);
            long vm = new Vm(Compiler.Compile(ast)).Execute();
            if (walked != vm)
            {
                Console.Error.WriteLine($"interp: '{src}': tree {walked}, vm {vm}");
                return 1;
            }
            vmSum += vm;
        }
        return Program.Expect("interp", $"{result} {vmSum}", "144238 5044");
    }

    // ---- lexer ----

    private enum Tok { Num, Name, Op, End }

    private readonly record struct Token(Tok Kind, string Text, long Value);

    private static List<Token> Lex(string s)
    {
        var toks = new List<Token>();
        int i = 0;
        while (i < s.Length)
        {
            char c = s[i];
            if (char.IsWhiteSpace(c))
            {
                i++;
            }
            else if (char.IsDigit(c))
            {
                int start = i;
                while (i < s.Length && char.IsDigit(s[i]))
                {
                    i++;
                }
                toks.Add(new Token(Tok.Num, s[start..i], long.Parse(s[start..i])));
            }
            else if (char.IsLetter(c))
            {
                int start = i;
                while (i < s.Length && char.IsLetterOrDigit(s[i]))
                {
                    i++;
                }
                toks.Add(new Token(Tok.Name, s[start..i], 0));
            }
            else
            {
                string op = i + 1 < s.Length && s.Substring(i, 2) is "==" or "<=" ? s.Substring(i, 2) : c.ToString();
                toks.Add(new Token(Tok.Op, op, 0));
                i += op.Length;
            }
        }
        toks.Add(new Token(Tok.End, "", 0));
        return toks;
    }

    // ---- AST ----

    private abstract class Node
    {
        public abstract long Eval(Evaluator ev, Env env);
    }

    private sealed class Num : Node
    {
        public readonly long Value;
        public Num(long value) => Value = value;
        public override long Eval(Evaluator ev, Env env) => Value;
    }

    private sealed class Var : Node
    {
        public readonly string Name;
        public Var(string name) => Name = name;
        public override long Eval(Evaluator ev, Env env) => env.Lookup(Name).Number;
    }

    private sealed class Let : Node
    {
        public readonly string Name;
        public readonly Node Init;
        public Let(string name, Node init) => (Name, Init) = (name, init);
        public override long Eval(Evaluator ev, Env env) => env.Define(Name, ev.Value(Init, env)).Number;
    }

    private sealed class Assign : Node
    {
        public readonly string Name;
        public readonly Node Value;
        public Assign(string name, Node value) => (Name, Value) = (name, value);
        public override long Eval(Evaluator ev, Env env) => env.Set(Name, ev.Value(Value, env)).Number;
    }

    private sealed class Binary : Node
    {
        public readonly string Op;
        public readonly Node Left, Right;
        public Binary(string op, Node left, Node right) => (Op, Left, Right) = (op, left, right);
        public override long Eval(Evaluator ev, Env env) => Apply(Op, Left.Eval(ev, env), Right.Eval(ev, env));

        public static long Apply(string op, long a, long b) => op switch
        {
            "+" => a + b,
            "-" => a - b,
            "*" => a * b,
            "/" => a / b,
            "%" => a % b,
            "<" => a < b ? 1 : 0,
            "<=" => a <= b ? 1 : 0,
            "==" => a == b ? 1 : 0,
            _ => throw new InvalidOperationException("operator " + op),
        };
    }

    private sealed class Neg : Node
    {
        public readonly Node Operand;
        public Neg(Node operand) => Operand = operand;
        public override long Eval(Evaluator ev, Env env) => -Operand.Eval(ev, env);
    }

    private sealed class If : Node
    {
        public readonly Node Cond, Then, Else;
        public If(Node c, Node t, Node e) => (Cond, Then, Else) = (c, t, e);
        public override long Eval(Evaluator ev, Env env) => Cond.Eval(ev, env) != 0 ? Then.Eval(ev, env) : Else.Eval(ev, env);
    }

    private sealed class While : Node
    {
        public readonly Node Cond, Body;
        public While(Node c, Node b) => (Cond, Body) = (c, b);
        public override long Eval(Evaluator ev, Env env)
        {
            long last = 0;
            while (Cond.Eval(ev, env) != 0)
            {
                last = Body.Eval(ev, env);
            }
            return last;
        }
    }

    private sealed class Block : Node
    {
        public readonly List<Node> Items;
        public Block(List<Node> items) => Items = items;
        public override long Eval(Evaluator ev, Env env)
        {
            var inner = new Env(env);
            long last = 0;
            foreach (Node n in Items)
            {
                last = n.Eval(ev, inner);
            }
            return last;
        }
    }

    private sealed class Lambda : Node
    {
        public readonly string[] Params;
        public readonly Node Body;
        public Lambda(string[] ps, Node body) => (Params, Body) = (ps, body);
        public override long Eval(Evaluator ev, Env env) => throw new InvalidOperationException("a function is not a number");
    }

    private sealed class Call : Node
    {
        public readonly Node Callee;
        public readonly Node[] Args;
        public Call(Node callee, Node[] args) => (Callee, Args) = (callee, args);
        public override long Eval(Evaluator ev, Env env) => ev.Invoke(this, env).Number;
    }

    // ---- parser ----

    private sealed class Parser
    {
        private readonly List<Token> toks;
        private int pos;

        private Parser(List<Token> toks) => this.toks = toks;

        public static Node ParseProgram(string src)
        {
            var p = new Parser(Lex(src));
            Node n = p.Sequence();
            p.Expect(Tok.End, "");
            return n;
        }

        private Token Peek => toks[pos];

        private bool At(string text) => Peek.Kind != Tok.Num && Peek.Text == text;

        private Token Expect(Tok kind, string text)
        {
            Token t = toks[pos++];
            if (t.Kind != kind || (text.Length > 0 && t.Text != text))
            {
                throw new FormatException($"expected {kind} '{text}', got '{t.Text}'");
            }
            return t;
        }

        private Node Sequence()
        {
            var items = new List<Node> { Expr(0) };
            while (At(";"))
            {
                pos++;
                items.Add(Expr(0));
            }
            return items.Count == 1 ? items[0] : new Block(items);
        }

        private static int Precedence(string op) => op switch
        {
            "<" or "<=" or "==" => 1,
            "+" or "-" => 2,
            "*" or "/" or "%" => 3,
            _ => -1,
        };

        private Node Expr(int minPrec)
        {
            Node left = Prefix();
            while (Peek.Kind == Tok.Op && Precedence(Peek.Text) >= Math.Max(minPrec, 1))
            {
                string op = toks[pos++].Text;
                left = new Binary(op, left, Expr(Precedence(op) + 1));
            }
            return left;
        }

        private Node Prefix()
        {
            Token t = toks[pos++];
            switch (t.Kind)
            {
                case Tok.Num:
                    return Postfix(new Num(t.Value));
                case Tok.Name when t.Text == "let":
                {
                    string name = Expect(Tok.Name, "").Text;
                    Expect(Tok.Op, "=");
                    return new Let(name, Expr(0));
                }
                case Tok.Name when t.Text == "fn":
                {
                    Expect(Tok.Op, "(");
                    var ps = new List<string>();
                    while (!At(")"))
                    {
                        ps.Add(Expect(Tok.Name, "").Text);
                        if (At(","))
                        {
                            pos++;
                        }
                    }
                    pos++;
                    return new Lambda(ps.ToArray(), Expr(0));
                }
                case Tok.Name when t.Text == "if":
                {
                    Node c = Expr(0);
                    Expect(Tok.Name, "then");
                    Node th = Expr(0);
                    Expect(Tok.Name, "else");
                    return new If(c, th, Expr(0));
                }
                case Tok.Name when t.Text == "while":
                {
                    Node c = Expr(0);
                    Expect(Tok.Name, "do");
                    return new While(c, Expr(0));
                }
                case Tok.Name when At("="):
                    pos++;
                    return new Assign(t.Text, Expr(0));
                case Tok.Name:
                    return Postfix(new Var(t.Text));
                case Tok.Op when t.Text == "-":
                    return new Neg(Prefix());
                case Tok.Op when t.Text == "(":
                {
                    Node inner = Expr(0);
                    Expect(Tok.Op, ")");
                    return Postfix(inner);
                }
                case Tok.Op when t.Text == "{":
                {
                    Node seq = Sequence();
                    Expect(Tok.Op, "}");
                    return seq is Block ? seq : new Block(new List<Node> { seq });
                }
                default:
                    throw new FormatException($"unexpected '{t.Text}'");
            }
        }

        private Node Postfix(Node callee)
        {
            while (At("("))
            {
                pos++;
                var args = new List<Node>();
                while (!At(")"))
                {
                    args.Add(Expr(0));
                    if (At(","))
                    {
                        pos++;
                    }
                }
                pos++;
                callee = new Call(callee, args.ToArray());
            }
            return callee;
        }
    }

    // ---- tree-walking evaluator ----

    /// A runtime value: a number or a closure.
    private readonly struct Value
    {
        public readonly long Number;
        public readonly Closure? Function;

        public Value(long n) => (Number, Function) = (n, null);

        public Value(Closure f) => (Number, Function) = (0, f);
    }

    private sealed class Closure
    {
        public readonly Lambda Code;
        public readonly Env Env;
        public Closure(Lambda code, Env env) => (Code, Env) = (code, env);
    }

    private sealed class Env
    {
        private readonly Dictionary<string, Value> vars = new();
        private readonly Env? parent;

        public Env(Env? parent) => this.parent = parent;

        public Value Define(string name, Value v) => vars[name] = v;

        public Value Lookup(string name) =>
            vars.TryGetValue(name, out Value v) ? v : parent?.Lookup(name) ?? throw new KeyNotFoundException(name);

        public Value Set(string name, Value v)
        {
            if (vars.ContainsKey(name))
            {
                return vars[name] = v;
            }
            return parent != null ? parent.Set(name, v) : throw new KeyNotFoundException(name);
        }
    }

    private sealed class Evaluator
    {
        public long Run(Node program) => program.Eval(this, new Env(null));

        /// Evaluates a node that may produce a function (the right side of let and =, arguments).
        public Value Value(Node n, Env env) => n switch
        {
            Lambda l => new Value(new Closure(l, env)),
            Var v => env.Lookup(v.Name),
            Call c => Invoke(c, env),
            _ => new Value(n.Eval(this, env)),
        };

        public Value Invoke(Call call, Env env)
        {
            Closure f = Value(call.Callee, env).Function ?? throw new InvalidOperationException("not a function");
            var frame = new Env(f.Env);
            for (int i = 0; i < f.Code.Params.Length; i++)
            {
                frame.Define(f.Code.Params[i], Value(call.Args[i], env));
            }
            return Value(f.Code.Body, frame);
        }
    }

    // ---- bytecode compiler and stack VM (numbers, variables, control flow; no functions) ----

    private enum Op : byte { Push, Load, Store, Pop, Bin, Neg, Jump, JumpIfZero, EnterScope, LeaveScope }

    private readonly record struct Instr(Op Op, long Arg = 0, string? Name = null);

    private static class Compiler
    {
        public static List<Instr> Compile(Node n)
        {
            var code = new List<Instr>();
            Emit(n, code);
            return code;
        }

        private static void Emit(Node n, List<Instr> code)
        {
            switch (n)
            {
                case Num num:
                    code.Add(new Instr(Op.Push, num.Value));
                    break;
                case Var v:
                    code.Add(new Instr(Op.Load, 0, v.Name));
                    break;
                case Let let:
                    Emit(let.Init, code);
                    code.Add(new Instr(Op.Store, 1, let.Name));
                    break;
                case Assign a:
                    Emit(a.Value, code);
                    code.Add(new Instr(Op.Store, 0, a.Name));
                    break;
                case Binary b:
                    Emit(b.Left, code);
                    Emit(b.Right, code);
                    code.Add(new Instr(Op.Bin, 0, b.Op));
                    break;
                case Neg neg:
                    Emit(neg.Operand, code);
                    code.Add(new Instr(Op.Neg));
                    break;
                case If i:
                {
                    Emit(i.Cond, code);
                    int jz = Placeholder(code);
                    Emit(i.Then, code);
                    int jend = Placeholder(code);
                    Patch(code, jz, Op.JumpIfZero, code.Count);
                    Emit(i.Else, code);
                    Patch(code, jend, Op.Jump, code.Count);
                    break;
                }
                case While w:
                {
                    code.Add(new Instr(Op.Push, 0));
                    int top = code.Count;
                    Emit(w.Cond, code);
                    int jz = Placeholder(code);
                    code.Add(new Instr(Op.Pop));
                    Emit(w.Body, code);
                    code.Add(new Instr(Op.Jump, top));
                    Patch(code, jz, Op.JumpIfZero, code.Count);
                    break;
                }
                case Block block:
                    code.Add(new Instr(Op.EnterScope));
                    for (int k = 0; k < block.Items.Count; k++)
                    {
                        if (k > 0)
                        {
                            code.Add(new Instr(Op.Pop));
                        }
                        Emit(block.Items[k], code);
                    }
                    code.Add(new Instr(Op.LeaveScope));
                    break;
                default:
                    throw new NotSupportedException(n.GetType().Name);
            }
        }

        private static int Placeholder(List<Instr> code)
        {
            code.Add(default);
            return code.Count - 1;
        }

        private static void Patch(List<Instr> code, int at, Op op, int target) => code[at] = new Instr(op, target);
    }

    private sealed class Vm
    {
        private readonly List<Instr> code;
        private readonly Stack<long> stack = new();
        private readonly List<Dictionary<string, long>> scopes = new() { new() };

        public Vm(List<Instr> code) => this.code = code;

        public long Execute()
        {
            int pc = 0;
            while (pc < code.Count)
            {
                Instr ins = code[pc++];
                switch (ins.Op)
                {
                    case Op.Push: stack.Push(ins.Arg); break;
                    case Op.Load: stack.Push(Find(ins.Name!)[ins.Name!]); break;
                    case Op.Store:
                        (ins.Arg == 1 ? scopes[^1] : Find(ins.Name!))[ins.Name!] = stack.Peek();
                        break;
                    case Op.Pop: stack.Pop(); break;
                    case Op.Bin:
                    {
                        long b = stack.Pop(), a = stack.Pop();
                        stack.Push(Binary.Apply(ins.Name!, a, b));
                        break;
                    }
                    case Op.Neg: stack.Push(-stack.Pop()); break;
                    case Op.Jump: pc = (int)ins.Arg; break;
                    case Op.JumpIfZero:
                        if (stack.Pop() == 0)
                        {
                            pc = (int)ins.Arg;
                        }
                        break;
                    case Op.EnterScope: scopes.Add(new()); break;
                    case Op.LeaveScope: scopes.RemoveAt(scopes.Count - 1); break;
                }
            }
            return stack.Pop();
        }

        private Dictionary<string, long> Find(string name)
        {
            for (int i = scopes.Count - 1; i >= 0; i--)
            {
                if (scopes[i].ContainsKey(name))
                {
                    return scopes[i];
                }
            }
            throw new KeyNotFoundException(name);
        }
    }
}
