package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// queueIdentitySchema is what identifies a queuey_queue to Terraform 1.12+ and OpenTofu 1.12+: the
// queue's name and vhost, set by every Create, Read, Update and import, and accepted by import
// blocks with `identity = {...}`.
func queueIdentitySchema() identityschema.Schema {
	return identityschema.Schema{
		Attributes: map[string]identityschema.Attribute{
			"name": identityschema.StringAttribute{
				RequiredForImport: true,
				Description:       "Name of the logical queue `q`.",
			},
			"vhost": identityschema.StringAttribute{
				OptionalForImport: true,
				Description:       "Virtual host of the queue. Defaults to the provider's `vhost` on import.",
			},
		},
	}
}

// queueIdentity is the identity of a queuey_queue.
type queueIdentity struct {
	Name  types.String `tfsdk:"name"`
	Vhost types.String `tfsdk:"vhost"`
}

// setIdentity records name and vhost as the identity (none before Terraform 1.12).
func setIdentity(ctx context.Context, id *tfsdk.ResourceIdentity, name, vhost string) diag.Diagnostics {
	if id == nil {
		return nil
	}
	return id.Set(ctx, queueIdentity{Name: types.StringValue(name), Vhost: types.StringValue(vhost)})
}

// importTarget reads the queue an import names: by ID (vhost/name) or by identity, whose missing
// vhost is the provider's (d, nil before Configure).
func importTarget(ctx context.Context, req resource.ImportStateRequest, d *providerData) (vhost, name string, diags diag.Diagnostics) {
	if req.ID != "" || req.Identity == nil {
		var err error
		if vhost, name, err = parseQueueID(req.ID); err != nil {
			diags.AddError("Invalid Import ID", err.Error())
		}
		return vhost, name, diags
	}
	var id queueIdentity
	if diags.Append(req.Identity.Get(ctx, &id)...); diags.HasError() {
		return "", "", diags
	}
	if d == nil {
		diags.AddError("Provider Not Configured", "The queuey provider has not been configured yet; this is a bug in the provider or in Terraform.")
		return "", "", diags
	}
	name = id.Name.ValueString()
	if err := topology.ValidateQueueName(name, d.suffixes); err != nil {
		diags.AddError("Invalid Import Identity", "The identity attribute `name` is not a queue this resource can manage: "+err.Error()+".")
		return "", "", diags
	}
	if vhost = id.Vhost.ValueString(); id.Vhost.IsNull() || vhost == "" {
		if d.vhostUnknown {
			diags.AddError("Invalid Import Identity", "The identity attribute `vhost` is not set and the provider's `vhost` is not known yet: "+
				"give `vhost` in the identity, or a known provider `vhost`.")
		}
		vhost = d.vhost
	}
	return vhost, name, diags
}
