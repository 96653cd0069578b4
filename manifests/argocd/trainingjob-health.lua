-- Argo CD health check for cadre.dev/TrainingJob (docs/design.md 1.2).
-- Maps the phases as kstatus reads the Reconciling and Stalled conditions:
-- Running and Succeeded are Healthy, Failed is Degraded, a suspended job is
-- Suspended, and a job on its way (Pending, Queued, Starting, Restarting) is
-- Progressing with the reason it waits. Written for Lua 5.1 (gopher-lua).
local hs = {}

local function condition(kind)
  if obj.status == nil or obj.status.conditions == nil then
    return nil
  end
  for _, c in ipairs(obj.status.conditions) do
    if c.type == kind then
      return c
    end
  end
  return nil
end

if obj.status == nil or obj.status.phase == nil or obj.status.phase == "" then
  hs.status = "Progressing"
  hs.message = "waiting for the cadre controller to look at the job"
  return hs
end

local generation = obj.metadata and obj.metadata.generation
local observed = obj.status.observedGeneration
if generation ~= nil and observed ~= nil and observed < generation then
  hs.status = "Progressing"
  hs.message = "waiting for the cadre controller to observe generation " .. generation
  return hs
end

local phase = obj.status.phase
local message = obj.status.message
local reconciling = condition("Reconciling")

if phase == "Running" then
  hs.status = "Healthy"
  hs.message = (obj.status.readyNodes or 0) .. " of " .. ((obj.spec and obj.spec.numNodes) or 1) .. " nodes Running"
elseif phase == "Succeeded" then
  hs.status = "Healthy"
  local c = condition("Succeeded")
  hs.message = (c and c.message) or message or "succeeded"
elseif phase == "Failed" then
  hs.status = "Degraded"
  local c = condition("Stalled") or condition("Failed")
  hs.message = (c and c.message) or message or "failed"
elseif phase == "Suspended" then
  hs.status = "Suspended"
  hs.message = message or "spec.suspend is true"
else
  -- Pending, Queued, Starting, Restarting, and any phase this check does not know yet.
  hs.status = "Progressing"
  hs.message = message or (reconciling and reconciling.message) or phase
  if reconciling ~= nil and reconciling.reason ~= nil and reconciling.reason ~= "" then
    hs.message = reconciling.reason .. ": " .. hs.message
  end
end
return hs
