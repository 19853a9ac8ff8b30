# Creates the vCenter role vslint needs and gives it to vslint's account at the root folder,
# with propagation, using VMware PowerCLI. docs/vcenter-role.md says why each privilege is in it.
#
# ./vcenter-role.ps1 -Server vcenter.example.com -Principal 'vslint@vsphere.local' [-Role NAME] [-WhatIf]
# Connect-VIServer asks for the administrator's credentials: no password is ever an argument.
[CmdletBinding(SupportsShouldProcess = $true)]
param(
    [Parameter(Mandatory = $true)][string]$Server,
    [Parameter(Mandatory = $true)][string]$Principal,
    [string]$Role = 'vslint-reader'
)
$ErrorActionPreference = 'Stop'

# The role's privileges, one a line: exactly the table of docs/vcenter-role.md
# (tests/integration/test_role.py compares the two). Host.Config.Storage is for the iSCSI port
# bindings, Host.Config.Settings for esxcli: delete either line to keep that out of the role,
# and vslint records the "iscsi-bindings" or "esxcli" gap on each host concerned instead.
$Privileges = @(
    'System.Anonymous'
    'System.View'
    'System.Read'
    'Host.Config.Storage'
    'Host.Config.Settings'
)

Write-Host "Connecting to $Server (PowerCLI asks for the administrator's credentials)"
$vc = Connect-VIServer -Server $Server -Credential (Get-Credential -Message "Administrator of $Server")
try {
    $privs = Get-VIPrivilege -Server $vc -Id $Privileges
    $existing = Get-VIRole -Server $vc -Name $Role -ErrorAction SilentlyContinue
    if ($existing) {
        # Set the existing role to exactly the list: add what it lacks, remove the rest.
        $extra = @(Get-VIPrivilege -Server $vc -Role $existing | Where-Object { $Privileges -notcontains $_.Id })
        Write-Host "Set-VIRole -Role $Role -AddPrivilege $($Privileges -join ', ')"
        if ($PSCmdlet.ShouldProcess($Role, 'Set-VIRole -AddPrivilege')) {
            $null = Set-VIRole -Server $vc -Role $existing -AddPrivilege $privs
        }
        if ($extra.Count -gt 0) {
            Write-Host "Set-VIRole -Role $Role -RemovePrivilege $(($extra | ForEach-Object Id) -join ', ')"
            if ($PSCmdlet.ShouldProcess($Role, 'Set-VIRole -RemovePrivilege')) {
                $null = Set-VIRole -Server $vc -Role $existing -RemovePrivilege $extra
            }
        }
    } else {
        Write-Host "New-VIRole -Name $Role -Privilege $($Privileges -join ', ')"
        if ($PSCmdlet.ShouldProcess($Role, 'New-VIRole')) {
            $null = New-VIRole -Server $vc -Name $Role -Privilege $privs
        }
    }
    $root = Get-Folder -Server $vc -NoRecursion
    $perm = Get-VIPermission -Server $vc -Entity $root -Principal $Principal -ErrorAction SilentlyContinue |
        Where-Object { $_.EntityId -eq $root.Id }
    if ($perm) {
        # The account has a permission at the root already: give it this role instead.
        Write-Host "Set-VIPermission -Permission ($Principal on $($root.Name)) -Role $Role -Propagate:`$true"
        if ($PSCmdlet.ShouldProcess("$Principal on $($root.Name)", 'Set-VIPermission')) {
            Set-VIPermission -Permission $perm -Role $Role -Propagate:$true | Format-List
        }
    } else {
        Write-Host "New-VIPermission -Entity $($root.Name) -Principal $Principal -Role $Role -Propagate:`$true"
        if ($PSCmdlet.ShouldProcess("$Principal on $($root.Name)", 'New-VIPermission')) {
            New-VIPermission -Server $vc -Entity $root -Principal $Principal -Role $Role -Propagate:$true | Format-List
        }
    }
    if (-not $WhatIfPreference) {
        Get-VIRole -Server $vc -Name $Role | Get-VIPrivilege | Select-Object Id, Name | Format-Table
    }
} finally {
    Disconnect-VIServer -Server $vc -Confirm:$false
}
