// Package describe writes what a model reads about a method when the
// method's owners wrote nothing: a description that says what it does, a
// short title, and the four MCP hints. Reflection from most servers
// carries no comments, so without this every tool would only repeat its
// name.
//
// It reads the structure real gRPC APIs share, all of it present in the
// descriptors that reflection serves:
//   - the method's name: its verb, by the standard methods of AIP-131 to
//     135 (Get, List, Create, Update, Delete), Compute Engine's Insert and
//     AggregatedList, and the custom verbs of AIP-136 (Stop, Resize,
//     Publish...), with a table of what each kind of verb does to the
//     world (verbs.go);
//   - what it acts on, and where: the google.api.http rule's path
//     (collections and their variables: /projects/{project}/zones/{zone}/
//     instances/{instance}/stop), else the AIP-123 pattern of the resource
//     the request references (AIP-122 resource_reference), else the
//     name's own object, and last the service's name (path.go, method.go);
//   - the inputs a call needs: AIP-203 field_behavior REQUIRED and the
//     path's variables;
//   - what a long-running method's operation holds when it is done.
//
// Analyze reads a method once, at discovery; Method's Description, Title
// and Hints write from that. Nothing here depends on one API's vocabulary:
// the tests hold the rules to Google Cloud, Temporal and plain services
// alike. Owners' comments and the (mcpgateway.v1.tool) option win over
// everything written here; the gateway decides that.
package describe
