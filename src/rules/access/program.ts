import type { Collection } from '../../collections/model.ts';
import type { RequestContext } from '../../context.ts';
import { RecordFieldResolver } from '../../records/resolver.ts';
import { ROOT_ALIAS } from '../../records/shape.ts';
import type { Sql } from '../../storage/sql.ts';
import type { Dialect } from '../../storage/types.ts';
import { type Expr, identifiersOf } from '../ast.ts';
import { compileExpr, type ResolvedOperand, type Resolver } from '../compile.ts';
import { bindSql } from '../deferred.ts';
import { parseCached } from '../index.ts';
import { SpecialNames, type RequestValueSource } from './request-names.ts';
import { type NameScope, parseRequestRef, type RequestRef } from './request-ref.ts';
import { bindValueOf, describe, describeStatically, RequestInputs, type RequestValue, shapeOf } from './request-values.ts';

/** Distinct request shapes kept per rule; beyond that the oldest compiled forms are dropped. */
const MAX_VARIANTS = 64;

function requestNames(expr: Expr, out: Array<{ name: string; position: number }> = []): Array<{ name: string; position: number }> {
  if (expr.type !== 'comparison') {
    requestNames(expr.left, out);
    requestNames(expr.right, out);
    return out;
  }
  for (const op of [expr.left, expr.right].flatMap(identifiersOf)) {
    if (op.name.startsWith('@request') && !out.some((n) => n.name === op.name)) out.push({ name: op.name, position: op.position });
  }
  return out;
}

/** A resolver for record fields with `@request.*` and `@collection.*` resolved by `SpecialNames`. */
export function ruleResolver(collection: Collection, scope: NameScope, dialect: Dialect, source: RequestValueSource, deferred: boolean): Resolver {
  let special: SpecialNames | undefined;
  const fields = new RecordFieldResolver(collection, ROOT_ALIAS, {
    dialect,
    lookup: scope.lookup,
    // Rules are written by administrators: hidden fields and emails are theirs to use.
    allowHidden: true,
    special: { resolve: (name: string, position: number): ResolvedOperand => special!.resolve(name, position) },
  });
  special = new SpecialNames(fields, scope, source, deferred);
  return fields;
}

/**
 * One rule of one collection, parsed and checked once. The SQL depends on the request only through
 * the shape of its values (empty or not, a list or not, which auth collection), so it is compiled
 * once per shape and the values are bound as parameters on every request.
 */
export class RuleProgram {
  private readonly variants = new Map<string, Sql>();

  private constructor(
    private readonly collection: Collection,
    private readonly ast: Expr,
    private readonly refs: RequestRef[],
    private readonly scope: NameScope,
    private readonly dialect: Dialect,
  ) {}

  /** Parses and checks `text` against the collections; throws FilterError with the position. */
  static build(text: string, scope: NameScope, dialect: Dialect): RuleProgram {
    const ast = parseCached(text);
    const refs = requestNames(ast).map((n) => parseRequestRef(n.name, n.position, scope));
    const program = new RuleProgram(scope.collection, ast, refs, scope, dialect);
    // Compiling with the statically known value kinds checks every field and path name.
    program.compile(refs.map((r) => describeStatically(r, scope)));
    return program;
  }

  private compile(values: RequestValue[]): Sql {
    const index = new Map(this.refs.map((r, i) => [r.name, i]));
    const source: RequestValueSource = (ref) => {
      const i = index.get(ref.name)!;
      return { index: i, value: values[i] };
    };
    const resolver = ruleResolver(this.collection, this.scope, this.dialect, source, true);
    return compileExpr(this.ast, resolver, { dialect: this.dialect, deferMacros: true });
  }

  /** The rule's condition for this request, over the record aliased `t0`. Throws FilterError. */
  condition(ctx: RequestContext): Sql {
    const inputs = new RequestInputs(ctx, this.scope.lookup);
    const values = this.refs.map((r) => describe(r, inputs, this.collection, this.scope.lookup));
    const key = values.map(shapeOf).join('|');
    let compiled = this.variants.get(key);
    if (compiled === undefined) {
      compiled = this.compile(values);
      if (this.variants.size >= MAX_VARIANTS) this.variants.delete(this.variants.keys().next().value!);
      this.variants.set(key, compiled);
    }
    return bindSql(compiled, { now: new Date(), values: values.map(bindValueOf) });
  }
}
