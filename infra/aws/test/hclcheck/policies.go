package main

// The IAM checks without an engine or provider: every aws_iam_policy_document of the module
// is evaluated from its HCL for each test tfvars (test/cases.json, through write-cases.mjs)
// and compared, statement by statement, with test/expected-policies.mjs, the same table
// plan-assert.mjs holds real plans to. So the least-privilege contract is checked in `npm test`
// even where the infra tier cannot build the AWS provider.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// The partition and account the expectations and the evaluation both use.
const (
	testPartition = "aws"
	testAccount   = "123456789012"
)

type condition struct {
	Test     string   `json:"test"`
	Variable string   `json:"variable"`
	Values   []string `json:"values"`
}

type principal struct {
	Type        string   `json:"type"`
	Identifiers []string `json:"identifiers"`
}

// statement is expected-policies.mjs's canonical form.
type statement struct {
	Sid        string      `json:"sid"`
	Effect     string      `json:"effect"`
	Actions    []string    `json:"actions"`
	Resources  []string    `json:"resources"`
	Conditions []condition `json:"conditions"`
	Principals []principal `json:"principals"`
}

// expectedDocs maps policy document names (node, nat64, s3_endpoint) to their statements;
// nat64 is null without a translator.
type expectedDocs map[string]*[]statement

// policyChecks runs the IAM checks for every combo and workload-ca-publish tfvars.
func policyChecks(r *result, dir string, blocks map[string][]*hclsyntax.Block) {
	testDir := filepath.Join(dir, "test")
	casesDir, err := os.MkdirTemp("", "hclcheck-cases-")
	if err != nil {
		r.check("write the test tfvars", []string{err.Error()})
		return
	}
	defer os.RemoveAll(casesDir)
	if out, err := exec.Command("node", filepath.Join(testDir, "write-cases.mjs"), casesDir).CombinedOutput(); err != nil {
		r.check("write the test tfvars (node write-cases.mjs)", []string{err.Error(), string(out)})
		return
	}
	files, _ := filepath.Glob(filepath.Join(casesDir, "combo-*.tfvars.json"))
	extra, _ := filepath.Glob(filepath.Join(casesDir, "good-workload-ca-publish*.tfvars.json"))
	files = append(files, extra...)
	otel, _ := filepath.Glob(filepath.Join(casesDir, "good-otel-logs-*.tfvars.json"))
	files = append(files, otel...)
	sort.Strings(files)

	r.check("IAM: no managed policy is attached and no role lists managed_policy_arns", func() (problems []string) {
		for _, b := range blocks["resource"] {
			if strings.HasPrefix(b.Labels[0], "aws_iam_") && strings.Contains(b.Labels[0], "policy_attachment") {
				problems = append(problems, fmt.Sprintf("%s.%s attaches a policy", b.Labels[0], b.Labels[1]))
			}
			if b.Labels[0] == "aws_iam_role" {
				if _, ok := b.Body.Attributes["managed_policy_arns"]; ok {
					problems = append(problems, fmt.Sprintf("aws_iam_role.%s sets managed_policy_arns", b.Labels[1]))
				}
			}
		}
		return problems
	}())

	docs := map[string]*hclsyntax.Block{}
	for _, b := range blocks["data"] {
		if b.Labels[0] == "aws_iam_policy_document" {
			docs[b.Labels[1]] = b
		}
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".tfvars.json")
		out, err := exec.Command("node", filepath.Join(testDir, "expected-policies.mjs"), file, testPartition, testAccount).Output()
		if err != nil {
			r.check(name+": expected-policies.mjs", []string{err.Error()})
			continue
		}
		var want expectedDocs
		if err := json.Unmarshal(out, &want); err != nil {
			r.check(name+": expected-policies.mjs output", []string{err.Error()})
			continue
		}
		ctx, problems := moduleContext(file, blocks)
		if len(problems) > 0 {
			r.check(name+": evaluate the module's variables and locals", problems)
			continue
		}
		for _, doc := range []string{"node", "nat64", "s3_endpoint"} {
			block, ok := docs[doc]
			if !ok {
				r.check(fmt.Sprintf("%s: data.aws_iam_policy_document.%s exists", name, doc), []string{"missing"})
				continue
			}
			expected := want[doc]
			if expected == nil {
				// No translator: the NAT64 role and its policy have count 0, so the document is never used.
				continue
			}
			got, problems := evalPolicyDocument(block.Body, ctx)
			if len(problems) == 0 {
				problems = compareStatements(got, *expected)
			}
			r.check(fmt.Sprintf("%s: every statement of data.aws_iam_policy_document.%s is exactly as expected, no wildcard action", name, doc), problems)
		}
	}
}

// moduleContext evaluates var.* from a tfvars file (declared variables absent from it are
// null, as their defaults are), data.aws_partition/aws_caller_identity, and every local that
// needs nothing the engine computes.
func moduleContext(tfvars string, blocks map[string][]*hclsyntax.Block) (*hcl.EvalContext, []string) {
	src, err := os.ReadFile(tfvars)
	if err != nil {
		return nil, []string{err.Error()}
	}
	ty, err := ctyjson.ImpliedType(src)
	if err != nil {
		return nil, []string{err.Error()}
	}
	raw, err := ctyjson.Unmarshal(src, ty)
	if err != nil {
		return nil, []string{err.Error()}
	}
	vars := raw.AsValueMap()
	for _, b := range blocks["variable"] {
		if _, ok := vars[b.Labels[0]]; !ok {
			vars[b.Labels[0]] = cty.NullVal(cty.DynamicPseudoType)
		}
	}
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{
			"var": cty.ObjectVal(vars),
			"data": cty.ObjectVal(map[string]cty.Value{
				"aws_partition":       cty.ObjectVal(map[string]cty.Value{"current": cty.ObjectVal(map[string]cty.Value{"partition": cty.StringVal(testPartition)})}),
				"aws_caller_identity": cty.ObjectVal(map[string]cty.Value{"current": cty.ObjectVal(map[string]cty.Value{"account_id": cty.StringVal(testAccount)})}),
			}),
		},
		Functions: map[string]function.Function{
			"concat": stdlib.ConcatFunc, "distinct": stdlib.DistinctFunc, "keys": stdlib.KeysFunc,
			"values": stdlib.ValuesFunc, "length": stdlib.LengthFunc, "merge": stdlib.MergeFunc,
			"sort": stdlib.SortFunc, "split": stdlib.SplitFunc, "substr": stdlib.SubstrFunc,
			"contains": stdlib.ContainsFunc, "index": stdlib.IndexFunc, "parseint": stdlib.ParseIntFunc,
			"join": stdlib.JoinFunc, "format": stdlib.FormatFunc, "flatten": stdlib.FlattenFunc,
		},
	}
	attrs := map[string]*hclsyntax.Attribute{}
	for _, b := range blocks["locals"] {
		for name, a := range b.Body.Attributes {
			attrs[name] = a
		}
	}
	locals := map[string]cty.Value{}
	// Locals refer to each other in any order: evaluate until no more succeed.
	for progress := true; progress; {
		progress = false
		ctx.Variables["local"] = cty.ObjectVal(locals)
		for name, a := range attrs {
			if _, done := locals[name]; done {
				continue
			}
			v, diags := a.Expr.Value(ctx)
			if diags.HasErrors() || !v.IsWhollyKnown() {
				continue
			}
			locals[name] = v
			progress = true
		}
	}
	ctx.Variables["local"] = cty.ObjectVal(locals)
	return ctx, nil
}

// evalPolicyDocument evaluates the statement blocks of an aws_iam_policy_document, static and
// dynamic, in order.
func evalPolicyDocument(body *hclsyntax.Body, ctx *hcl.EvalContext) ([]statement, []string) {
	var out []statement
	var problems []string
	for name := range body.Attributes {
		problems = append(problems, fmt.Sprintf("the document sets %s: only statement blocks are checked", name))
	}
	for _, b := range body.Blocks {
		switch {
		case b.Type == "statement":
			s, p := evalStatement(b.Body, ctx)
			out, problems = append(out, s), append(problems, p...)
		case b.Type == "dynamic" && len(b.Labels) == 1 && b.Labels[0] == "statement":
			each, ok := b.Body.Attributes["for_each"]
			if !ok || len(b.Body.Blocks) != 1 || b.Body.Blocks[0].Type != "content" {
				problems = append(problems, "a dynamic statement needs for_each and one content block")
				continue
			}
			v, diags := each.Expr.Value(ctx)
			if diags.HasErrors() {
				problems = append(problems, diagProblems(diags)...)
				continue
			}
			for it := v.ElementIterator(); it.Next(); {
				key, value := it.Element()
				child := ctx.NewChild()
				child.Variables = map[string]cty.Value{"statement": cty.ObjectVal(map[string]cty.Value{"key": key, "value": value})}
				s, p := evalStatement(b.Body.Blocks[0].Body, child)
				out, problems = append(out, s), append(problems, p...)
			}
		default:
			problems = append(problems, fmt.Sprintf("unexpected %s block in a policy document", b.Type))
		}
	}
	return out, problems
}

func evalStatement(body *hclsyntax.Body, ctx *hcl.EvalContext) (statement, []string) {
	var problems []string
	str := func(attrs hclsyntax.Attributes, name, fallback string) string {
		a, ok := attrs[name]
		if !ok {
			return fallback
		}
		v, diags := a.Expr.Value(ctx)
		if diags.HasErrors() || v.IsNull() || !v.IsKnown() || v.Type() != cty.String {
			problems = append(problems, fmt.Sprintf("%s does not evaluate to a string: %v", name, diagProblems(diags)))
			return ""
		}
		return v.AsString()
	}
	strs := func(attrs hclsyntax.Attributes, name string) []string {
		a, ok := attrs[name]
		if !ok {
			return []string{}
		}
		v, diags := a.Expr.Value(ctx)
		if diags.HasErrors() || !v.IsWhollyKnown() || v.IsNull() || !v.CanIterateElements() {
			problems = append(problems, fmt.Sprintf("%s does not evaluate to a list of strings: %v", name, diagProblems(diags)))
			return nil
		}
		list := []string{}
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			if e.Type() != cty.String {
				problems = append(problems, fmt.Sprintf("%s holds a %s", name, e.Type().FriendlyName()))
				continue
			}
			list = append(list, e.AsString())
		}
		sort.Strings(list)
		return list
	}
	for _, forbidden := range []string{"not_actions", "not_resources"} {
		if _, ok := body.Attributes[forbidden]; ok {
			problems = append(problems, "the statement uses "+forbidden)
		}
	}
	s := statement{
		Sid:        str(body.Attributes, "sid", ""),
		Effect:     str(body.Attributes, "effect", "Allow"),
		Actions:    strs(body.Attributes, "actions"),
		Resources:  strs(body.Attributes, "resources"),
		Conditions: []condition{},
		Principals: []principal{},
	}
	for _, a := range s.Actions {
		if strings.Contains(a, "*") {
			problems = append(problems, fmt.Sprintf("%s: wildcard action %s", s.Sid, a))
		}
	}
	for _, b := range body.Blocks {
		switch b.Type {
		case "condition":
			s.Conditions = append(s.Conditions, condition{
				Test: str(b.Body.Attributes, "test", ""), Variable: str(b.Body.Attributes, "variable", ""),
				Values: strs(b.Body.Attributes, "values"),
			})
		case "principals":
			s.Principals = append(s.Principals, principal{
				Type: str(b.Body.Attributes, "type", ""), Identifiers: strs(b.Body.Attributes, "identifiers"),
			})
		default:
			problems = append(problems, fmt.Sprintf("%s: unchecked %s block", s.Sid, b.Type))
		}
	}
	sort.Slice(s.Conditions, func(i, j int) bool {
		return s.Conditions[i].Test+" "+s.Conditions[i].Variable < s.Conditions[j].Test+" "+s.Conditions[j].Variable
	})
	sort.Slice(s.Principals, func(i, j int) bool { return s.Principals[i].Type < s.Principals[j].Type })
	return s, problems
}

// compareStatements wants the same Sids in the same order and each statement equal.
func compareStatements(got, want []statement) (problems []string) {
	sids := func(list []statement) (out []string) {
		for _, s := range list {
			out = append(out, s.Sid)
		}
		return out
	}
	if strings.Join(sids(got), ",") != strings.Join(sids(want), ",") {
		problems = append(problems, fmt.Sprintf("statements are %v, want %v", sids(got), sids(want)))
	}
	for _, w := range want {
		for _, g := range got {
			if g.Sid != w.Sid {
				continue
			}
			gj, _ := json.Marshal(g)
			wj, _ := json.Marshal(w)
			if string(gj) != string(wj) {
				problems = append(problems, fmt.Sprintf("%s is %s, want %s", w.Sid, gj, wj))
			}
		}
	}
	return problems
}
